// cuda_categorical_hinge: the metric categorical_hinge (plugins/metrics/categorical_hinge) with its
// rule run on an NVIDIA GPU.
#include "../../metrics/categorical_hinge/categorical_hinge.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalHinge, "categorical_hinge")
