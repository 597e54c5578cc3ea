#include "categorical_mse.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "categorical_mse", dtnn::metrics::CategoricalMse::kDescription,
            dtnn::metrics::CategoricalMse::kParameters,
            dtnn::create_metric<dtnn::metrics::CategoricalMse>)
