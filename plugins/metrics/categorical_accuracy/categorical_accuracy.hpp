// categorical_accuracy: the fraction of rows whose largest prediction is the target's largest
// value (the first largest, on ties). Totals: {correct, rows}.
// The rule runs on the host here and on a GPU in the twin beside it (cuda_categorical_accuracy.cu).
#pragma once
#include "dtnn/row_rule_metric.hpp"

namespace dtnn::metrics {

// 1 when the row's argmax is the target's, else 0.
struct CategoricalAccuracyRule : rules::MeanRule {
  template <class T>
  DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, rules::Contribution* out) const {
    return rules::mean_term(rules::argmax(p, m) == rules::argmax(t, m) ? 1.0 : 0.0, out);
  }
};

class CategoricalAccuracy : public RowMeanMetric<CategoricalAccuracyRule> {
 public:
  static constexpr const char* kDescription =
      "fraction of samples whose argmax matches the target's";
  static constexpr const char* kTraits = R"({"default": true, "better": "max"})";
  static constexpr const char* kParameters = "{}";
  explicit CategoricalAccuracy(const Params&) {}
  std::string name() const override { return "categorical_accuracy"; }
};

}  // namespace dtnn::metrics
