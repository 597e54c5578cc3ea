#include "regression_mse.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "regression_mse", dtnn::metrics::RegressionMse::kDescription,
            dtnn::metrics::RegressionMse::kParameters,
            dtnn::create_metric<dtnn::metrics::RegressionMse>)
