#include "kl_divergence.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "kl_divergence",
                   .description = dtnn::losses::KlDivergence::kDescription,
                   .parameters = dtnn::losses::KlDivergence::kParameters,
                   .traits = dtnn::losses::KlDivergence::kTraits,
                   .factory = dtnn::create_loss<dtnn::losses::KlDivergence>)
