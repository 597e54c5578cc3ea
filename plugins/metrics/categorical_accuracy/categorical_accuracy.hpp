// categorical_accuracy: the fraction of rows whose largest prediction is the target's largest
// value (the first largest, on ties). Totals: {correct, rows}.
// The rule (dtnn/metric_rules.hpp) runs on the host here and on the GPU in
// cuda_categorical_accuracy.
#pragma once
#include "dtnn/metric.hpp"

namespace dtnn::metrics {

class CategoricalAccuracy : public RowMeanMetric {
 public:
  static constexpr const char* kDescription =
      "fraction of samples whose argmax matches the target's";
  static constexpr const char* kParameters = "{}";
  explicit CategoricalAccuracy(const Params&)
      : RowMeanMetric(rules::RowMetric::categorical_accuracy) {}
  std::string name() const override { return "categorical_accuracy"; }
};

}  // namespace dtnn::metrics
