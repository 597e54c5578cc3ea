// cuda_multiclass_confusion_matrix: multiclass_confusion_matrix with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "multiclass_confusion_matrix.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::MulticlassConfusionMatrix, "multiclass_confusion_matrix")
