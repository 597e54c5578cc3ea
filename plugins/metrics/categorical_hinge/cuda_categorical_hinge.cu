// cuda_categorical_hinge: categorical_hinge with its rule run on an NVIDIA GPU.
#include "categorical_hinge.hpp"
#include "device_metric.cuh"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalHinge, "categorical_hinge")
