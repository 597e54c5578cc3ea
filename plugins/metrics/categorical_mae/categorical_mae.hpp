// categorical_mae: mean over rows of |1 - p_target|, target = the argmax of the row's target
// (PyDTNN's). Totals: {sum over rows, rows}.
// The rule runs on the host here and on a GPU in the twin beside it (cuda_categorical_mae.cu).
#pragma once
#include "dtnn/row_rule_metric.hpp"

namespace dtnn::metrics {

// |1 - p_k|, k = argmax t.
struct CategoricalMaeRule : rules::MeanRule {
  template <class T>
  DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, rules::Contribution* out) const {
    return rules::mean_term(rules::magnitude(1.0 - double(p[rules::argmax(t, m)])), out);
  }
};

class CategoricalMae : public RowMeanMetric<CategoricalMaeRule> {
 public:
  static constexpr const char* kDescription =
      "mean of |1 - predicted probability of the target class|";
  static constexpr const char* kTraits = R"({"better": "min"})";
  static constexpr const char* kParameters = "{}";
  explicit CategoricalMae(const Params&) {}
  std::string name() const override { return "categorical_mae"; }
};

}  // namespace dtnn::metrics
