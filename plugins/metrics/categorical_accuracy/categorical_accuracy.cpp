#include "categorical_accuracy.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "categorical_accuracy", dtnn::metrics::CategoricalAccuracy::kDescription,
            dtnn::metrics::CategoricalAccuracy::kParameters,
            dtnn::create_metric<dtnn::metrics::CategoricalAccuracy>)
