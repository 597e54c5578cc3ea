#include "recall.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "recall",
                   .description = dtnn::metrics::Recall::kDescription,
                   .parameters = dtnn::metrics::Recall::kParameters,
                   .traits = dtnn::metrics::Recall::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::Recall>)
