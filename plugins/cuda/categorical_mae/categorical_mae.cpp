// cuda_categorical_mae: the metric categorical_mae (plugins/metrics/categorical_mae) with its rule
// run on an NVIDIA GPU.
#include "../../metrics/categorical_mae/categorical_mae.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalMae, "categorical_mae")
