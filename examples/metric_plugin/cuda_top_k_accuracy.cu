// top_k_accuracy's twin on an NVIDIA GPU: the same rule, run where the predictions are.
#include "device_metric.cuh"
#include "top_k_accuracy.hpp"

DTNN_CUDA_METRIC(example::TopKAccuracy, "top_k_accuracy")
