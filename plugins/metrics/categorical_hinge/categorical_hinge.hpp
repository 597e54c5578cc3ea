// categorical_hinge: mean over rows of max(0, 1 + max_{j != target} p_j - p_target)
// (Keras and PyDTNN: pos = sum t p, neg = max (1 - t) p, max(0, neg - pos + 1)).
// Totals: {sum over rows, rows}.
// The rule (dtnn/metric_rules.hpp) runs on the host here and on the GPU in cuda_categorical_hinge.
#pragma once
#include "dtnn/metric.hpp"

namespace dtnn::metrics {

class CategoricalHinge : public RowMeanMetric {
 public:
  static constexpr const char* kDescription =
      "mean of max(0, 1 + largest wrong-class score - target score)";
  static constexpr const char* kParameters = "{}";
  explicit CategoricalHinge(const Params&) : RowMeanMetric(rules::RowMetric::categorical_hinge) {}
  std::string name() const override { return "categorical_hinge"; }
};

}  // namespace dtnn::metrics
