// cuda_recall: the metric recall (plugins/metrics/recall) with its rule run on an NVIDIA GPU.
#include "../../metrics/recall/recall.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::Recall, "recall")
