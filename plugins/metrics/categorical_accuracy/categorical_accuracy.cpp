// categorical_accuracy: fraction of rows whose largest prediction is the target's largest value.
// Totals: {correct, rows}.
#include <algorithm>

#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class CategoricalAccuracy final : public Metric {
 public:
  std::string name() const override { return "categorical_accuracy"; }
  std::size_t num_totals() const override { return 2; }

  void accumulate(const Tensor& p, const Tensor& t, std::span<double> totals) const override {
    accumulate_row_mean(p, t, totals, [](const auto* pr, const auto* tr, std::int64_t m) {
      return (std::max_element(pr, pr + m) - pr) == (std::max_element(tr, tr + m) - tr) ? 1.0 : 0.0;
    });
  }

  double value(std::span<const double> totals) const override { return row_mean(totals); }
};

Plugin* create(const Params&, const PluginContext&) { return new CategoricalAccuracy(); }

}  // namespace

DTNN_PLUGIN("metric", "categorical_accuracy",
            "fraction of samples whose argmax matches the target's", "{}", create)
