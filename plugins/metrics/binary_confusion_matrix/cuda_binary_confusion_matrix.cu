// cuda_binary_confusion_matrix: binary_confusion_matrix with its rule run on an NVIDIA GPU.
#include "binary_confusion_matrix.hpp"
#include "device_metric.cuh"

DTNN_CUDA_METRIC(dtnn::metrics::BinaryConfusionMatrix, "binary_confusion_matrix")
