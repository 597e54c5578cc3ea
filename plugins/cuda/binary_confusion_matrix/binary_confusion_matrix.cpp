// cuda_binary_confusion_matrix: the metric binary_confusion_matrix
// (plugins/metrics/binary_confusion_matrix) with its rule run on an NVIDIA GPU.
#include "../../metrics/binary_confusion_matrix/binary_confusion_matrix.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::BinaryConfusionMatrix, "binary_confusion_matrix")
