// categorical_mse: mean over rows of (1 - p_target)^2, target = the argmax of the row's target
// (PyDTNN's). Totals: {sum over rows, rows}.
// The rule runs on the host here and on a GPU in the twin beside it (cuda_categorical_mse.cu).
#pragma once
#include "dtnn/row_rule_metric.hpp"

namespace dtnn::metrics {

// (1 - p_k)^2, k = argmax t.
struct CategoricalMseRule : rules::MeanRule {
  template <class T>
  DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, rules::Contribution* out) const {
    const double e = 1.0 - double(p[rules::argmax(t, m)]);
    return rules::mean_term(e * e, out);
  }
};

class CategoricalMse : public RowMeanMetric<CategoricalMseRule> {
 public:
  static constexpr const char* kDescription =
      "mean of (1 - predicted probability of the target class)^2";
  static constexpr const char* kTraits = R"({"better": "min"})";
  static constexpr const char* kParameters = "{}";
  explicit CategoricalMse(const Params&) {}
  std::string name() const override { return "categorical_mse"; }
};

}  // namespace dtnn::metrics
