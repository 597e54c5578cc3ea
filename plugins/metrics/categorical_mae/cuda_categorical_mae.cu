// cuda_categorical_mae: categorical_mae with its rule run on an NVIDIA GPU.
#include "categorical_mae.hpp"
#include "device_metric.cuh"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalMae, "categorical_mae")
