// regression_mae: mean over all outputs of |p - t| (each row's mean, averaged over rows).
// Totals: {sum over rows, rows}.
// The rule (dtnn/metric_rules.hpp) runs on the host here and on the GPU in cuda_regression_mae.
#pragma once
#include "dtnn/metric.hpp"

namespace dtnn::metrics {

class RegressionMae : public RowMeanMetric {
 public:
  static constexpr const char* kDescription = "mean absolute error over all outputs";
  static constexpr const char* kParameters = "{}";
  explicit RegressionMae(const Params&) : RowMeanMetric(rules::RowMetric::regression_mae) {}
  std::string name() const override { return "regression_mae"; }
};

}  // namespace dtnn::metrics
