// categorical_hinge: mean over rows of max(0, 1 + max_{j != target} p_j - p_target)
// (Keras and PyDTNN: pos = sum t p, neg = max (1 - t) p, max(0, neg - pos + 1)).
// Totals: {sum over rows, rows}.
// The rule runs on the host here and on a GPU in the twin beside it (cuda_categorical_hinge.cu).
#pragma once
#include "dtnn/row_rule_metric.hpp"

namespace dtnn::metrics {

// max(0, 1 + max_j (1 - t_j) p_j - sum_j t_j p_j).
struct CategoricalHingeRule : rules::MeanRule {
  template <class T>
  DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, rules::Contribution* out) const {
    double pos = 0, neg = (1.0 - double(t[0])) * double(p[0]);
    for (std::int64_t j = 0; j < m; ++j) {
      pos += double(t[j]) * double(p[j]);
      const double wrong = (1.0 - double(t[j])) * double(p[j]);
      neg = wrong > neg ? wrong : neg;
    }
    const double hinge = neg - pos + 1.0;
    return rules::mean_term(hinge > 0 ? hinge : 0.0, out);
  }
};

class CategoricalHinge : public RowMeanMetric<CategoricalHingeRule> {
 public:
  static constexpr const char* kDescription =
      "mean of max(0, 1 + largest wrong-class score - target score)";
  static constexpr const char* kTraits = R"({"better": "min"})";
  static constexpr const char* kParameters = "{}";
  explicit CategoricalHinge(const Params&) {}
  std::string name() const override { return "categorical_hinge"; }
};

}  // namespace dtnn::metrics
