#include "categorical_hinge.hpp"

#include "dtnn/plugin_api.hpp"

DTNN_PLUGIN("metric", "categorical_hinge", dtnn::metrics::CategoricalHinge::kDescription,
            dtnn::metrics::CategoricalHinge::kParameters,
            dtnn::create_metric<dtnn::metrics::CategoricalHinge>)
