#include "categorical_mae.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "categorical_mae",
                   .description = dtnn::metrics::CategoricalMae::kDescription,
                   .parameters = dtnn::metrics::CategoricalMae::kParameters,
                   .traits = dtnn::metrics::CategoricalMae::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::CategoricalMae>)
