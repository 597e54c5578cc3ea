// categorical_mse: mean over rows of (1 - p_target)^2, target = the argmax of the row's target
// (PyDTNN's).
// Totals: {sum over rows, rows}.
#include <algorithm>
#include <cmath>

#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class CategoricalMse final : public Metric {
 public:
  std::string name() const override { return "categorical_mse"; }
  std::size_t num_totals() const override { return 2; }
  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    accumulate_row_mean(y_pred, y_true, totals, [](const auto* p, const auto* t, std::int64_t m) {
      const std::int64_t k = std::max_element(t, t + m) - t;  // the target class
      const double e = 1.0 - double(p[k]);
      return e * e;
    });
  }
  double value(std::span<const double> totals) const override { return row_mean(totals); }
};

Plugin* create(const Params&, const PluginContext&) { return new CategoricalMse(); }

}  // namespace

DTNN_PLUGIN("metric", "categorical_mse",
            "mean of (1 - predicted probability of the target class)^2", "{}", create)
