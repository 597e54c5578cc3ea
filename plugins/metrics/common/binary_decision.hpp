// The binary decision "class positive_class" that precision, recall, f1_score and
// binary_confusion_matrix count: a row is positive when its argmax is positive_class, or, with a
// single output (m = 1), when that output is >= 0.5. Their rule adds 1 to TP (totals[0]), FP (1)
// or FN (2); binary_confusion_matrix also counts the rows (3).
#pragma once
#include <cstdint>

#include "dtnn/params.hpp"
#include "dtnn/row_rule_metric.hpp"

namespace dtnn::metrics {

struct BinaryDecisionRule {
  std::int64_t positive = 1;
  bool count_rows = false;

  DTNN_HOST_DEVICE std::int64_t totals_reached(std::int64_t) const { return count_rows ? 4 : 3; }

  template <class T>
  DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, rules::Contribution* out) const {
    const bool predicted = is_positive(p, m), actual = is_positive(t, m);
    int n = 0;
    if (predicted || actual) out[n++] = {predicted ? (actual ? 0 : 1) : 2, 1.0};
    if (count_rows) out[n++] = {3, 1.0};
    return n;
  }

  template <class T>
  DTNN_HOST_DEVICE bool is_positive(const T* v, std::int64_t m) const {
    return m == 1 ? v[0] >= T(0.5) : rules::argmax(v, m) == positive;
  }
};

// Reads and checks the parameter positive_class. Totals: {TP, FP, FN} (and rows, when counted).
class BinaryDecisionMetric : public RowRuleMetric<BinaryDecisionRule> {
 public:
  static constexpr const char* kParameters = R"({"positive_class": 1})";
  std::size_t num_totals() const override { return rule().count_rows ? 4 : 3; }

 protected:
  explicit BinaryDecisionMetric(const Params& p, bool count_rows = false)
      : RowRuleMetric({positive_class(p), count_rows}) {}

 private:
  static std::int64_t positive_class(const Params& p) {
    const std::int64_t c = p.get_int("positive_class");
    if (c < 0) p.fail("positive_class", "a class index >= 0");
    return c;
  }
};

}  // namespace dtnn::metrics
