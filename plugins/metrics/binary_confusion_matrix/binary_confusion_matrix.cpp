#include "binary_confusion_matrix.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "binary_confusion_matrix",
                   .description = dtnn::metrics::BinaryConfusionMatrix::kDescription,
                   .parameters = dtnn::metrics::BinaryConfusionMatrix::kParameters,
                   .traits = dtnn::metrics::BinaryConfusionMatrix::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::BinaryConfusionMatrix>)
