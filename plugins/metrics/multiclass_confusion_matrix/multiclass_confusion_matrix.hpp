// multiclass_confusion_matrix: counts[t][p] of rows whose target's argmax is class t and whose
// prediction's argmax is class p. The counts are totals, so batches and ranks add them (a matrix
// summed, not averaged); the history records the matrix, and the metric's value is its trace over
// its sum (the accuracy). Totals: the classes x classes counts, row-major.
// The rule runs on the host here and on a GPU in the twin beside it
// (cuda_multiclass_confusion_matrix.cu).
#pragma once
#include "dtnn/row_rule_metric.hpp"

namespace dtnn::metrics {

// 1 to cell [k][argmax p] of an m x m matrix, k = argmax t.
struct ConfusionRule {
  DTNN_HOST_DEVICE std::int64_t totals_reached(std::int64_t m) const { return m * m; }
  template <class T>
  DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, rules::Contribution* out) const {
    out[0] = {rules::argmax(t, m) * m + rules::argmax(p, m), 1.0};
    return 1;
  }
};

class MulticlassConfusionMatrix : public RowRuleMetric<ConfusionRule> {
 public:
  static constexpr const char* kDescription =
      "counts of (target class, predicted class); value: their accuracy";
  static constexpr const char* kTraits = R"({"better": "max"})";
  static constexpr const char* kParameters = "{}";
  explicit MulticlassConfusionMatrix(const Params&) : RowRuleMetric({}) {}
  std::string name() const override { return "multiclass_confusion_matrix"; }
  void set_classes(std::int64_t classes) override { classes_ = classes; }
  std::size_t num_totals() const override { return static_cast<std::size_t>(classes_ * classes_); }

  double value(std::span<const double> totals) const override {
    double trace = 0, sum = 0;
    for (std::int64_t i = 0; i < classes_ * classes_; ++i)
      sum += totals[static_cast<std::size_t>(i)];
    for (std::int64_t c = 0; c < classes_; ++c)
      trace += totals[static_cast<std::size_t>(c * classes_ + c)];
    return sum > 0 ? trace / sum : 0.0;
  }

  std::vector<std::vector<double>> matrix(std::span<const double> totals) const override {
    std::vector<std::vector<double>> rows(static_cast<std::size_t>(classes_));
    for (std::int64_t t = 0; t < classes_; ++t)
      rows[static_cast<std::size_t>(t)].assign(totals.begin() + t * classes_,
                                               totals.begin() + (t + 1) * classes_);
    return rows;
  }

 private:
  std::int64_t classes_ = 2;
};

}  // namespace dtnn::metrics
