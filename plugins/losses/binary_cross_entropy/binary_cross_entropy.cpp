#include "binary_cross_entropy.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "binary_cross_entropy",
                   .description = dtnn::losses::BinaryCrossEntropy::kDescription,
                   .parameters = dtnn::losses::BinaryCrossEntropy::kParameters,
                   .traits = dtnn::losses::BinaryCrossEntropy::kTraits,
                   .factory = dtnn::create_loss<dtnn::losses::BinaryCrossEntropy>)
