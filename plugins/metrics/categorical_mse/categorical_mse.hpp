// categorical_mse: mean over rows of (1 - p_target)^2, target = the argmax of the row's target
// (PyDTNN's). Totals: {sum over rows, rows}.
// The rule (dtnn/metric_rules.hpp) runs on the host here and on the GPU in cuda_categorical_mse.
#pragma once
#include "dtnn/metric.hpp"

namespace dtnn::metrics {

class CategoricalMse : public RowMeanMetric {
 public:
  static constexpr const char* kDescription =
      "mean of (1 - predicted probability of the target class)^2";
  static constexpr const char* kParameters = "{}";
  explicit CategoricalMse(const Params&) : RowMeanMetric(rules::RowMetric::categorical_mse) {}
  std::string name() const override { return "categorical_mse"; }
};

}  // namespace dtnn::metrics
