#include "top_k_accuracy.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "top_k_accuracy",
                   .description = example::TopKAccuracy::kDescription,
                   .parameters = example::TopKAccuracy::kParameters,
                   .traits = example::TopKAccuracy::kTraits,
                   .factory = dtnn::create_metric<example::TopKAccuracy>)
