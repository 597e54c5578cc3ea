// cuda_categorical_mse: the metric categorical_mse (plugins/metrics/categorical_mse) with its rule
// run on an NVIDIA GPU.
#include "../../metrics/categorical_mse/categorical_mse.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalMse, "categorical_mse")
