// cuda_f1_score: the metric f1_score (plugins/metrics/f1_score) with its rule run on an NVIDIA GPU.
#include "../../metrics/f1_score/f1_score.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::F1Score, "f1_score")
