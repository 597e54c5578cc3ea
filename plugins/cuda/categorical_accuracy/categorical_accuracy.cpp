// cuda_categorical_accuracy: the metric categorical_accuracy (plugins/metrics/categorical_accuracy)
// with its rule run on an NVIDIA GPU.
#include "../../metrics/categorical_accuracy/categorical_accuracy.hpp"

#include "device_metric.hpp"

DTNN_CUDA_METRIC(dtnn::metrics::CategoricalAccuracy, "categorical_accuracy")
