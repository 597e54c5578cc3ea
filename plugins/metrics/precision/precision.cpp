#include "precision.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "precision",
                   .description = dtnn::metrics::Precision::kDescription,
                   .parameters = dtnn::metrics::Precision::kParameters,
                   .traits = dtnn::metrics::Precision::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::Precision>)
