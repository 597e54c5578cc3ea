#include "nll.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "nll", .description = dtnn::losses::Nll::kDescription,
                   .parameters = dtnn::losses::Nll::kParameters,
                   .traits = dtnn::losses::Nll::kTraits,
                   .factory = dtnn::create_loss<dtnn::losses::Nll>)
