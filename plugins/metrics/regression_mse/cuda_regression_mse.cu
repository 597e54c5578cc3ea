// cuda_regression_mse: regression_mse with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "regression_mse.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::RegressionMse, "regression_mse")
