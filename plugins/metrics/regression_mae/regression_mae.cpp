#include "regression_mae.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "regression_mae", dtnn::metrics::RegressionMae::kDescription,
            dtnn::metrics::RegressionMae::kParameters,
            dtnn::create_metric<dtnn::metrics::RegressionMae>)
