#include <string>

#include "dtnn/error.hpp"
#include "dtnn/metric.hpp"

namespace dtnn {

void check_rows_fit(const rules::MetricRule& rule, std::int64_t m, std::size_t totals) {
  const std::int64_t reached = rule.totals_reached(m);
  if (reached > static_cast<std::int64_t>(totals))
    throw Error("metric: rows of " + std::to_string(m) + " values add to " +
                std::to_string(reached) + " totals, but the metric keeps " +
                std::to_string(totals) +
                " (are the predictions as wide as the classes the metric was told?)");
}

void add_contributions(std::span<const rules::Contribution> slots, std::span<double> totals) {
  for (const rules::Contribution& c : slots) {
    if (c.index < 0) continue;  // an unused slot
    DTNN_CHECK(static_cast<std::size_t>(c.index) < totals.size(),
               "metric: a rule's contribution outside its totals_reached()");
    totals[static_cast<std::size_t>(c.index)] += c.value;
  }
}

void accumulate_rows(const Tensor& y_pred, const Tensor& y_true, const rules::MetricRule& rule,
                     std::span<double> totals) {
  const std::int64_t n = y_pred.dim(0);
  if (n == 0) return;
  const std::int64_t m = y_pred.numel() / n;
  DTNN_CHECK(y_true.numel() == y_pred.numel(), "metric: predictions and targets differ in size");
  check_rows_fit(rule, m, totals.size());
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

}  // namespace dtnn
