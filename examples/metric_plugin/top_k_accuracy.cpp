#include "top_k_accuracy.hpp"

#include "dtnn/plugin_api.hpp"

// Conformance (dtnn check-plugin): k below and above the classes.
DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "top_k_accuracy",
                   .description = example::TopKAccuracy::kDescription,
                   .parameters = example::TopKAccuracy::kParameters,
                   .traits = R"({"conformance": [{"params": {"k": 2}, "classes": 5},
                                                 {"params": {}, "classes": 3}]})",
                   .factory = dtnn::create_metric<example::TopKAccuracy>)
