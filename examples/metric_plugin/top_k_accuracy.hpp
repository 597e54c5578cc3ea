// top_k_accuracy: the fraction of rows whose target class is among the k largest predictions
// (ties counted in the row's favour). Totals: {hits, rows}, so ranks and batches add them.
// The rule runs on the host in top_k_accuracy.cpp and in a kernel in cuda_top_k_accuracy.cu.
#pragma once
#include "dtnn/row_rule_metric.hpp"

namespace example {

using namespace dtnn;

// 1 when fewer than k predictions exceed the target class's, else 0.
struct TopKRule : rules::MeanRule {
  std::int64_t k = 5;
  template <class T>
  DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, rules::Contribution* out) const {
    const T target = p[rules::argmax(t, m)];
    std::int64_t above = 0;
    for (std::int64_t j = 0; j < m; ++j) above += p[j] > target ? 1 : 0;
    return rules::mean_term(above < k ? 1.0 : 0.0, out);
  }
};

class TopKAccuracy : public RowMeanMetric<TopKRule> {
 public:
  static constexpr const char* kDescription =
      "example out-of-tree metric: fraction of rows whose target is among the k largest outputs";
  static constexpr const char* kParameters = R"({"k": 5})";
  // Both the plugin and its CUDA twin export these. Conformance (dtnn check-plugin): k below and
  // above the classes; "better": schedulers in mode auto maximise it.
  static constexpr const char* kTraits = R"({"better": "max", "conformance": [
      {"params": {"k": 2}, "classes": 5}, {"params": {}, "classes": 3}]})";
  explicit TopKAccuracy(const Params& p) : RowMeanMetric<TopKRule>(rule_of(p)) {}
  std::string name() const override { return "top_k_accuracy"; }

 private:
  static TopKRule rule_of(const Params& p) {
    TopKRule r;
    r.k = p.get_int("k");
    if (r.k < 1) p.fail("k", "a positive number of classes");
    return r;
  }
};

}  // namespace example
