// binary_confusion_matrix: the 2x2 counts [[TN, FP], [FN, TP]] of the decision "class
// positive_class" (with one output: output >= 0.5), summed over batches and ranks; the history
// records the matrix, the value is the decision's accuracy (TP + TN) / all.
// Totals: {TP, FP, FN, rows}.
// The rule (plugins/metrics/common/binary_decision.hpp) runs on the host here and on a GPU in the
// twin beside it (cuda_binary_confusion_matrix.cu).
#pragma once
#include "binary_decision.hpp"

namespace dtnn::metrics {

class BinaryConfusionMatrix : public BinaryDecisionMetric {
 public:
  static constexpr const char* kDescription =
      "[[TN, FP], [FN, TP]] for positive_class; value: the decision's accuracy";
  static constexpr const char* kTraits = R"({"better": "max"})";
  explicit BinaryConfusionMatrix(const Params& p) : BinaryDecisionMetric(p, /*count_rows=*/true) {}
  std::string name() const override { return "binary_confusion_matrix"; }
  double value(std::span<const double> t) const override {
    return t[3] > 0 ? (t[3] - t[1] - t[2]) / t[3] : 0.0;
  }
  std::vector<std::vector<double>> matrix(std::span<const double> t) const override {
    const double tn = t[3] - t[0] - t[1] - t[2];
    return {{tn, t[1]}, {t[2], t[0]}};
  }
};

}  // namespace dtnn::metrics
