#include "cross_entropy.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "cross_entropy",
                   .description = dtnn::losses::CrossEntropy::kDescription,
                   .parameters = dtnn::losses::CrossEntropy::kParameters,
                   .traits = dtnn::losses::CrossEntropy::kTraits,
                   .factory = dtnn::create_loss<dtnn::losses::CrossEntropy>)
