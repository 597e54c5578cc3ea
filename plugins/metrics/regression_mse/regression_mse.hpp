// regression_mse: mean over all outputs of (p - t)^2 (each row's mean, averaged over rows).
// Totals: {sum over rows, rows}.
// The rule (dtnn/metric_rules.hpp) runs on the host here and on the GPU in cuda_regression_mse.
#pragma once
#include "dtnn/metric.hpp"

namespace dtnn::metrics {

class RegressionMse : public RowMeanMetric {
 public:
  static constexpr const char* kDescription = "mean squared error over all outputs";
  static constexpr const char* kParameters = "{}";
  explicit RegressionMse(const Params&) : RowMeanMetric(rules::RowMetric::regression_mse) {}
  std::string name() const override { return "regression_mse"; }
};

}  // namespace dtnn::metrics
