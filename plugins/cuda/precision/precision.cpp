// cuda_precision: the metric precision (plugins/metrics/precision) with its rule run on an NVIDIA
// GPU.
#include "../../metrics/precision/precision.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::Precision, "precision")
