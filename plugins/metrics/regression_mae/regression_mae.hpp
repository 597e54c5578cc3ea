// regression_mae: mean over all outputs of |p - t| (each row's mean, averaged over rows).
// Totals: {sum over rows, rows}.
// The rule runs on the host here and on a GPU in the twin beside it (cuda_regression_mae.cu).
#pragma once
#include "dtnn/row_rule_metric.hpp"

namespace dtnn::metrics {

// mean_j |p_j - t_j|.
struct RegressionMaeRule : rules::MeanRule {
  template <class T>
  DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, rules::Contribution* out) const {
    double s = 0;
    for (std::int64_t j = 0; j < m; ++j) s += rules::magnitude(double(p[j]) - double(t[j]));
    return rules::mean_term(s / double(m), out);
  }
};

class RegressionMae : public RowMeanMetric<RegressionMaeRule> {
 public:
  static constexpr const char* kDescription = "mean absolute error over all outputs";
  static constexpr const char* kTraits = R"({"better": "min"})";
  static constexpr const char* kParameters = "{}";
  explicit RegressionMae(const Params&) {}
  std::string name() const override { return "regression_mae"; }
};

}  // namespace dtnn::metrics
