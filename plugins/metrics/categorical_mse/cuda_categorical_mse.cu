// cuda_categorical_mse: categorical_mse with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "categorical_mse.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalMse, "categorical_mse")
