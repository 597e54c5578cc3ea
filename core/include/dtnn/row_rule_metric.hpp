// A metric whose totals are sums over rows of a row rule's contributions (dtnn/row_rule.hpp): the
// plugin gives its rule and the value of its totals, and this header runs the rule on the host.
// Its CUDA twin (plugins/cuda/common/device_metric.cuh) inherits the same class and runs the same
// rule in a kernel, folding the rows' contributions with the fold used here, so the two agree on
// everything but the rule's arithmetic and their totals mix across devices and ranks.
//
//   struct HitRule { ... };                              // in the plugin's header
//   class Hits : public RowMeanMetric<HitRule> { ... };  // name(), the description, parameters
#pragma once
#include <span>

#include "dtnn/error.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/row_rule.hpp"

namespace dtnn {

// Both executors' check before a batch: an Error when rows of m values reach `reached` totals but
// the metric keeps fewer (a confusion matrix told other classes than the predictions have), so
// that a refused batch leaves the totals as they were.
DTNN_CORE_EXPORT void check_rows_fit(std::int64_t reached, std::int64_t m, std::size_t totals);
// Adds the contributions in slots (kMaxContributions per row, the unused with index -1) to totals:
// the fold of both executors, after check_rows_fit.
DTNN_CORE_EXPORT void add_contributions(std::span<const rules::Contribution> slots,
                                        std::span<double> totals);

// The host executor: every row of (y_pred, y_true), [n, m] of float or double, through rule.
template <class Rule>
void accumulate_rows(const Tensor& y_pred, const Tensor& y_true, const Rule& rule,
                     std::span<double> totals) {
  const std::int64_t n = y_pred.dim(0);
  if (n == 0) return;
  const std::int64_t m = y_pred.numel() / n;
  DTNN_CHECK(y_true.numel() == y_pred.numel(), "metric: predictions and targets differ in size");
  check_rows_fit(rule.totals_reached(m), m, totals.size());
  dispatch_dtype(y_pred.dtype(), [&](auto z) {
    using T = decltype(z);
    const T *p = y_pred.data<T>(), *t = y_true.data<T>();
    rules::Contribution slots[rules::kMaxContributions];
    for (std::int64_t r = 0; r < n; ++r) {
      rules::row_slots(rule, p + r * m, t + r * m, m, slots);
      add_contributions(slots, totals);
    }
  });
}

// What every row-rule metric answers whatever its rule: the conformance tests ask each one
// through this, and the twins' contract rests on it.
class RowRuleMetricBase : public Metric {
 public:
  virtual std::int64_t totals_reached(std::int64_t m) const = 0;
  // The rule on one row of doubles.
  virtual int row(const double* p, const double* t, std::int64_t m,
                  rules::Contribution* out) const = 0;
};

template <class R>
class RowRuleMetric : public RowRuleMetricBase {
 public:
  using Rule = R;
  const Rule& rule() const { return rule_; }
  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    accumulate_rows(y_pred, y_true, rule_, totals);
  }
  std::int64_t totals_reached(std::int64_t m) const final { return rule_.totals_reached(m); }
  int row(const double* p, const double* t, std::int64_t m, rules::Contribution* out) const final {
    return rule_.row(p, t, m, out);
  }

 protected:
  explicit RowRuleMetric(Rule rule) : rule_(rule) {}

 private:
  Rule rule_;
};

// totals[0] / totals[1], or 0 before any row.
inline double row_mean(std::span<const double> totals) {
  return totals[1] > 0 ? totals[0] / totals[1] : 0.0;
}

// A mean over rows of one value per row (the rule returns rules::mean_term). Totals: {sum, rows}.
template <class Rule>
class RowMeanMetric : public RowRuleMetric<Rule> {
 public:
  std::size_t num_totals() const override { return 2; }
  double value(std::span<const double> totals) const override { return row_mean(totals); }

 protected:
  explicit RowMeanMetric(Rule rule = {}) : RowRuleMetric<Rule>(rule) {}
};

}  // namespace dtnn
