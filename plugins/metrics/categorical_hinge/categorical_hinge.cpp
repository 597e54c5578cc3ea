// categorical_hinge: mean over rows of max(0, 1 + max_{j != target} p_j - p_target)
// (Keras and PyDTNN: pos = sum t p, neg = max (1 - t) p, max(0, neg - pos + 1)).
// Totals: {sum over rows, rows}.
#include <algorithm>
#include <cmath>

#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class CategoricalHinge final : public Metric {
 public:
  std::string name() const override { return "categorical_hinge"; }
  std::size_t num_totals() const override { return 2; }
  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    accumulate_row_mean(y_pred, y_true, totals, [](const auto* p, const auto* t, std::int64_t m) {
      double pos = 0, neg = -INFINITY;
      for (std::int64_t j = 0; j < m; ++j) {
        pos += double(t[j]) * double(p[j]);
        neg = std::max(neg, (1.0 - double(t[j])) * double(p[j]));
      }
      return std::max(0.0, neg - pos + 1.0);
    });
  }
  double value(std::span<const double> totals) const override { return row_mean(totals); }
};

Plugin* create(const Params&, const PluginContext&) { return new CategoricalHinge(); }

}  // namespace

DTNN_PLUGIN("metric", "categorical_hinge",
            "mean of max(0, 1 + largest wrong-class score - target score)", "{}", create)
