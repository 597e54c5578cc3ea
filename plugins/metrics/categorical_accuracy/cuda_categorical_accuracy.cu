// cuda_categorical_accuracy: categorical_accuracy with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "categorical_accuracy.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalAccuracy, "categorical_accuracy")
