#include "categorical_mse.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "categorical_mse",
                   .description = dtnn::metrics::CategoricalMse::kDescription,
                   .parameters = dtnn::metrics::CategoricalMse::kParameters,
                   .traits = dtnn::metrics::CategoricalMse::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::CategoricalMse>)
