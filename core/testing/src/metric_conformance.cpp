// The metric driver of plugin_conformance.hpp.
#include <cmath>
#include <nlohmann/json.hpp>

#include "dtnn/dataset.hpp"
#include "dtnn/row_rule_metric.hpp"
#include "dtnn/testing/guarded.hpp"
#include "dtnn/testing/plugin_conformance.hpp"

namespace dtnn::testing {

using nlohmann::json;

namespace {

// rows x m predictions (each row positive, summing to 1) and one-hot targets.
std::pair<Tensor, Tensor> batch(std::int64_t rows, std::int64_t m, DType dtype) {
  Tensor p = Tensor::empty(Shape{rows, m}, dtype), t = Tensor::zeros(Shape{rows, m}, dtype);
  fill_uniform(p, 41, 0.05, 1.0);
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::int64_t j = 0; j < m; ++j) sum += value_at(p, r * m + j);
    for (std::int64_t j = 0; j < m; ++j) set_value_at(p, r * m + j, value_at(p, r * m + j) / sum);
    set_value_at(t, r * m + (r * 7 + 3) % m, 1.0);
  }
  return {p, t};
}

}  // namespace

std::vector<Check> check_metric(const Registry& registry, const PluginRecord& record,
                                const std::string& case_json) {
  const json c = json::parse(case_json);
  const json params = c.value("params", json::object());
  const std::int64_t m = c.value("classes", std::int64_t{4}), rows = 10;
  std::vector<Check> out;
  for (DType dtype : {DType::float32, DType::float64}) {
    const std::string setting =
        "params " + params.dump() + ", " + std::to_string(rows) + " rows of " + std::to_string(m) +
        ", " + c.value("labels", std::string("one_hot")) + " targets, " + to_string(dtype);
    auto metric = registry.create_as<Metric>(
        "metric", record.name, Params(params, "conformance: " + record.name), {}, record.device);
    metric->set_classes(m);
    auto [p, t] = batch(rows, m, dtype);
    if (c.value("labels", std::string("one_hot")) == "ids") {  // one class id per row, one ignored
      Tensor ids = Tensor::empty(Shape{rows}, dtype);
      for (std::int64_t r = 0; r < rows; ++r)
        set_value_at(ids, r, r == 2 ? kIgnoredLabel : double((r * 7 + 3) % m));
      t = ids;
    }
    std::vector<double> whole(metric->num_totals(), 0.0), halves(whole.size(), 0.0);
    metric->accumulate(p, t, whole);
    metric->accumulate(p.slice_batch(0, rows / 2), t.slice_batch(0, rows / 2), halves);
    metric->accumulate(p.slice_batch(rows / 2, rows), t.slice_batch(rows / 2, rows), halves);
    double worst = 0;
    for (std::size_t i = 0; i < whole.size(); ++i)
      worst = std::max(worst, std::abs(whole[i] - halves[i]) / std::max(1.0, std::abs(whole[i])));
    out.push_back({"totals add: a batch's are its halves'", setting, true, worst < 1e-12,
                   "difference " + std::to_string(worst)});
    const double value = metric->value(whole);
    out.push_back({"the value of the totals is finite", setting, true, std::isfinite(value),
                   "value " + std::to_string(value)});

    // A row rule writes at most kMaxContributions slots, inside totals_reached and the totals
    // (its twin's kernel gives each row that many slots).
    if (const auto* rule = dynamic_cast<const RowRuleMetricBase*>(metric.get());
        rule && dtype == DType::float64) {
      bool inside = rule->totals_reached(m) <= static_cast<std::int64_t>(metric->num_totals());
      for (std::int64_t r = 0; r < rows && inside; ++r) {
        rules::Contribution slots[rules::kMaxContributions + 1];
        const int n = rule->row(p.data<double>() + r * m, t.data<double>() + r * m, m, slots);
        inside = n >= 0 && n <= rules::kMaxContributions;
        for (int k = 0; k < n && inside; ++k)
          inside = slots[k].index >= 0 && slots[k].index < rule->totals_reached(m);
      }
      out.push_back({"a row rule stays inside its slots and totals", setting, true, inside, ""});
    }
  }
  return out;
}

}  // namespace dtnn::testing
