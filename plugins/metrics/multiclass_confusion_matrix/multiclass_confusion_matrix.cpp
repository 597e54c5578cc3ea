#include "multiclass_confusion_matrix.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "multiclass_confusion_matrix",
            dtnn::metrics::MulticlassConfusionMatrix::kDescription,
            dtnn::metrics::MulticlassConfusionMatrix::kParameters,
            dtnn::create_metric<dtnn::metrics::MulticlassConfusionMatrix>)
