// precision: true positives / predicted positives, TP / (TP + FP), for the class positive_class
// (default 1: the second output; a model with one output is positive where that output is >= 0.5).
// The counts are summed over batches and ranks before dividing, so the value is exact, not a mean
// of means. Totals: {TP, FP, FN}.
// The rule (plugins/metrics/common/binary_decision.hpp) runs on the host here and on a GPU in the
// twin beside it (cuda_precision.cu).
#pragma once
#include "binary_decision.hpp"

namespace dtnn::metrics {

class Precision : public BinaryDecisionMetric {
 public:
  static constexpr const char* kDescription = "TP / (TP + FP) for positive_class";
  static constexpr const char* kTraits = R"({"better": "max"})";
  explicit Precision(const Params& p) : BinaryDecisionMetric(p) {}
  std::string name() const override { return "precision"; }
  double value(std::span<const double> totals) const override {
    const double d = totals[0] + totals[1];
    return d > 0 ? totals[0] / d : 0.0;
  }
};

}  // namespace dtnn::metrics
