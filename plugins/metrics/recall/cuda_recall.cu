// cuda_recall: recall with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "recall.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::Recall, "recall")
