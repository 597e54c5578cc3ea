// cuda_regression_mae: the metric regression_mae (plugins/metrics/regression_mae) with its rule run
// on an NVIDIA GPU.
#include "../../metrics/regression_mae/regression_mae.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::RegressionMae, "regression_mae")
