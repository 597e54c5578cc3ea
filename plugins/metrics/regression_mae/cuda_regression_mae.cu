// cuda_regression_mae: regression_mae with its rule run on an NVIDIA GPU.
#include "device_metric.cuh"
#include "regression_mae.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::RegressionMae, "regression_mae")
