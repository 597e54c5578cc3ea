// cuda_regression_mse: the metric regression_mse (plugins/metrics/regression_mse) with its rule run
// on an NVIDIA GPU.
#include "../../metrics/regression_mse/regression_mse.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::RegressionMse, "regression_mse")
