#include "binary_confusion_matrix.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "binary_confusion_matrix", dtnn::metrics::BinaryConfusionMatrix::kDescription,
            dtnn::metrics::BinaryConfusionMatrix::kParameters,
            dtnn::create_metric<dtnn::metrics::BinaryConfusionMatrix>)
