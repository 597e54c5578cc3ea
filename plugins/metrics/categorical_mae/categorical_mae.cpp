// categorical_mae: mean over rows of |1 - p_target|, target = the argmax of the row's target
// (PyDTNN's).
// Totals: {sum over rows, rows}.
#include <algorithm>
#include <cmath>

#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class CategoricalMae final : public Metric {
 public:
  std::string name() const override { return "categorical_mae"; }
  std::size_t num_totals() const override { return 2; }
  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    accumulate_row_mean(y_pred, y_true, totals, [](const auto* p, const auto* t, std::int64_t m) {
      const std::int64_t k = std::max_element(t, t + m) - t;  // the target class
      return std::abs(1.0 - double(p[k]));
    });
  }
  double value(std::span<const double> totals) const override { return row_mean(totals); }
};

Plugin* create(const Params&, const PluginContext&) { return new CategoricalMae(); }

}  // namespace

DTNN_PLUGIN("metric", "categorical_mae", "mean of |1 - predicted probability of the target class|",
            "{}", create)
