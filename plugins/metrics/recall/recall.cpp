#include "recall.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "recall", dtnn::metrics::Recall::kDescription,
            dtnn::metrics::Recall::kParameters, dtnn::create_metric<dtnn::metrics::Recall>)
