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
    dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t n = p.dim(0), m = p.numel() / std::max<std::int64_t>(n, 1);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      double correct = 0;
      for (std::int64_t r = 0; r < n; ++r) {
        const T* pr = pp + r * m;
        const T* tr = tp + r * m;
        correct += (std::max_element(pr, pr + m) - pr) == (std::max_element(tr, tr + m) - tr);
      }
      totals[0] += correct;
      totals[1] += static_cast<double>(n);
    });
  }

  double value(std::span<const double> totals) const override {
    return totals[1] > 0 ? totals[0] / totals[1] : 0.0;
  }
};

Plugin* create(const Params&, const PluginContext&) { return new CategoricalAccuracy(); }

}  // namespace

DTNN_PLUGIN("metric", "categorical_accuracy",
            "fraction of samples whose argmax matches the target's", "{}", create)
