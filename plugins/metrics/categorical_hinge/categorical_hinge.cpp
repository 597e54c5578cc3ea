#include "categorical_hinge.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "categorical_hinge",
                   .description = dtnn::metrics::CategoricalHinge::kDescription,
                   .parameters = dtnn::metrics::CategoricalHinge::kParameters,
                   .traits = dtnn::metrics::CategoricalHinge::kTraits,
                   .factory = dtnn::create_metric<dtnn::metrics::CategoricalHinge>)
