// cuda_categorical_hinge: categorical_hinge with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "categorical_hinge.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalHinge, "categorical_hinge")
