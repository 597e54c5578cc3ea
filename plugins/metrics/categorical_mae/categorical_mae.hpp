// categorical_mae: mean over rows of |1 - p_target|, target = the argmax of the row's target
// (PyDTNN's). Totals: {sum over rows, rows}.
// The rule (dtnn/metric_rules.hpp) runs on the host here and on the GPU in cuda_categorical_mae.
#pragma once
#include "dtnn/metric.hpp"

namespace dtnn::metrics {

class CategoricalMae : public RowMeanMetric {
 public:
  static constexpr const char* kDescription =
      "mean of |1 - predicted probability of the target class|";
  static constexpr const char* kParameters = "{}";
  explicit CategoricalMae(const Params&) : RowMeanMetric(rules::RowMetric::categorical_mae) {}
  std::string name() const override { return "categorical_mae"; }
};

}  // namespace dtnn::metrics
