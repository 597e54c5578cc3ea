// cuda_precision: precision with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "precision.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::Precision, "precision")
