#include "multiclass_confusion_matrix.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "multiclass_confusion_matrix",
                   .description = dtnn::metrics::MulticlassConfusionMatrix::kDescription,
                   .parameters = dtnn::metrics::MulticlassConfusionMatrix::kParameters,
                   .traits = dtnn::metrics::MulticlassConfusionMatrix::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::MulticlassConfusionMatrix>)
