// cuda_categorical_accuracy: categorical_accuracy with its rule run on an NVIDIA GPU.
#include "categorical_accuracy.hpp"
#include "device_metric.cuh"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalAccuracy, "categorical_accuracy")
