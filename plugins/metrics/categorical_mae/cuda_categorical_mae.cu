// cuda_categorical_mae: categorical_mae with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "categorical_mae.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalMae, "categorical_mae")
