#include "regression_mse.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "regression_mse",
                   .description = dtnn::metrics::RegressionMse::kDescription,
                   .parameters = dtnn::metrics::RegressionMse::kParameters,
                   .traits = dtnn::metrics::RegressionMse::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::RegressionMse>)
