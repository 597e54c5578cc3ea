#include "categorical_accuracy.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "categorical_accuracy",
                   .description = dtnn::metrics::CategoricalAccuracy::kDescription,
                   .parameters = dtnn::metrics::CategoricalAccuracy::kParameters,
                   .traits = dtnn::metrics::CategoricalAccuracy::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::CategoricalAccuracy>)
