// f1_score: the harmonic mean of precision and recall, 2 TP / (2 TP + FP + FN), for the class
// positive_class (default 1: the second output; a model with one output is positive where that
// output is >= 0.5). The counts are summed over batches and ranks before dividing, so the value is
// exact, not a mean of means. Totals: {TP, FP, FN}.
// The rule (plugins/metrics/common/binary_decision.hpp) runs on the host here and on a GPU in the
// twin beside it (cuda_f1_score.cu).
#pragma once
#include "binary_decision.hpp"

namespace dtnn::metrics {

class F1Score : public BinaryDecisionMetric {
 public:
  static constexpr const char* kDescription = "2 TP / (2 TP + FP + FN) for positive_class";
  static constexpr const char* kTraits = R"({"better": "max"})";
  explicit F1Score(const Params& p) : BinaryDecisionMetric(p) {}
  std::string name() const override { return "f1_score"; }
  double value(std::span<const double> totals) const override {
    const double d = 2 * totals[0] + totals[1] + totals[2];
    return d > 0 ? 2 * totals[0] / d : 0.0;
  }
};

}  // namespace dtnn::metrics
