// cuda_multiclass_confusion_matrix: the metric multiclass_confusion_matrix
// (plugins/metrics/multiclass_confusion_matrix) with its rule run on an NVIDIA GPU.
#include "../../metrics/multiclass_confusion_matrix/multiclass_confusion_matrix.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::MulticlassConfusionMatrix, "multiclass_confusion_matrix")
