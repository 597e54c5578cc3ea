#include <string>

#include "dtnn/error.hpp"
#include "dtnn/row_rule_metric.hpp"

namespace dtnn {

void check_rows_fit(std::int64_t reached, std::int64_t m, std::size_t totals) {
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

}  // namespace dtnn
