#include "regression_mae.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "regression_mae",
                   .description = dtnn::metrics::RegressionMae::kDescription,
                   .parameters = dtnn::metrics::RegressionMae::kParameters,
                   .traits = dtnn::metrics::RegressionMae::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::RegressionMae>)
