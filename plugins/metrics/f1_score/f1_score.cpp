#include "f1_score.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "f1_score", dtnn::metrics::F1Score::kDescription,
            dtnn::metrics::F1Score::kParameters, dtnn::create_metric<dtnn::metrics::F1Score>)
