#include "categorical_cross_entropy.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "categorical_cross_entropy",
                   .description = dtnn::losses::CategoricalCrossEntropy::kDescription,
                   .parameters = dtnn::losses::CategoricalCrossEntropy::kParameters,
                   .traits = dtnn::losses::CategoricalCrossEntropy::kTraits,
                   .factory = dtnn::create_loss<dtnn::losses::CategoricalCrossEntropy>)
