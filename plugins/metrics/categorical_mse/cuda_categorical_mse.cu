// cuda_categorical_mse: categorical_mse with its rule run on an NVIDIA GPU.
#include "categorical_mse.hpp"
#include "device_metric.cuh"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalMse, "categorical_mse")
