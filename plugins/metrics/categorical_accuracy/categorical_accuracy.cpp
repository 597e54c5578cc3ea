#include "categorical_accuracy.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "categorical_accuracy",
                   .description = dtnn::metrics::CategoricalAccuracy::kDescription,
                   .parameters = dtnn::metrics::CategoricalAccuracy::kParameters,
                   .traits = R"({"default": true, "better": "max"})",
                   .factory = dtnn::create_metric<dtnn::metrics::CategoricalAccuracy>)
