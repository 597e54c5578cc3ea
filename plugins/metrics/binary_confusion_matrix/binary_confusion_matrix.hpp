// binary_confusion_matrix: the 2x2 counts [[TN, FP], [FN, TP]] of the decision "class
// positive_class" (with one output: output >= 0.5), summed over batches and ranks; the history
// records the matrix, the value is the decision's accuracy (TP + TN) / all.
// Totals: {TP, FP, FN, rows}.
// The rule (dtnn/metric_rules.hpp) runs on the host here and on the GPU in
// cuda_binary_confusion_matrix.
#pragma once
#include "dtnn/metric.hpp"

namespace dtnn::metrics {

class BinaryConfusionMatrix : public BinaryDecisionMetric {
 public:
  static constexpr const char* kDescription =
      "[[TN, FP], [FN, TP]] for positive_class; value: the decision's accuracy";
  static constexpr const char* kParameters = R"({"positive_class": 1})";
  explicit BinaryConfusionMatrix(const Params& p)
      : BinaryDecisionMetric(p, rules::RowMetric::binary_confusion) {}
  std::string name() const override { return "binary_confusion_matrix"; }
  std::size_t num_totals() const override { return 4; }
  double value(std::span<const double> t) const override {
    return t[3] > 0 ? (t[3] - t[1] - t[2]) / t[3] : 0.0;
  }
  std::vector<std::vector<double>> matrix(std::span<const double> t) const override {
    const double tn = t[3] - t[0] - t[1] - t[2];
    return {{tn, t[1]}, {t[2], t[0]}};
  }
};

}  // namespace dtnn::metrics
