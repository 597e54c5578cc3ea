#include "f1_score.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "f1_score",
                   .description = dtnn::metrics::F1Score::kDescription,
                   .parameters = dtnn::metrics::F1Score::kParameters,
                   .traits = dtnn::metrics::F1Score::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::F1Score>)
