// regression_mae: mean over all outputs of |p - t| (each row's mean, averaged over rows).
// Totals: {sum over rows, rows}.
#include <algorithm>
#include <cmath>

#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class RegressionMae final : public Metric {
 public:
  std::string name() const override { return "regression_mae"; }
  std::size_t num_totals() const override { return 2; }
  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    accumulate_row_mean(y_pred, y_true, totals, [](const auto* p, const auto* t, std::int64_t m) {
      double s = 0;
      for (std::int64_t j = 0; j < m; ++j) s += std::abs(double(p[j]) - double(t[j]));
      return s / static_cast<double>(m);
    });
  }
  double value(std::span<const double> totals) const override { return row_mean(totals); }
};

Plugin* create(const Params&, const PluginContext&) { return new RegressionMae(); }

}  // namespace

DTNN_PLUGIN("metric", "regression_mae", "mean absolute error over all outputs", "{}", create)
