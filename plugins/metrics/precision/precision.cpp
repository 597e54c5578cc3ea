#include "precision.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "precision", dtnn::metrics::Precision::kDescription,
            dtnn::metrics::Precision::kParameters, dtnn::create_metric<dtnn::metrics::Precision>)
