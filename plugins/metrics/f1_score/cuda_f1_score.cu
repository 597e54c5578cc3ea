// cuda_f1_score: f1_score with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "f1_score.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::F1Score, "f1_score")
