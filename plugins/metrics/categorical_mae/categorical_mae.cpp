#include "categorical_mae.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "categorical_mae", dtnn::metrics::CategoricalMae::kDescription,
            dtnn::metrics::CategoricalMae::kParameters,
            dtnn::create_metric<dtnn::metrics::CategoricalMae>)
