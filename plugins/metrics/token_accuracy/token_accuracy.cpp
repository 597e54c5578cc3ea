// token_accuracy: the share of positions whose most likely class is the target, over the
// positions that have a target (padding excluded). Totals: (correct, counted).
#include "dtnn/class_targets.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class TokenAccuracy final : public Metric {
 public:
  explicit TokenAccuracy(const Params&) {}
  std::string name() const override { return "token_accuracy"; }
  std::size_t num_totals() const override { return 2; }

  void accumulate(const Tensor& y, const Tensor& t, std::span<double> totals) const override {
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const ClassTargets targets(y, t, "token_accuracy");
      const std::int64_t m = targets.classes();
      const T *yp = y.data<T>(), *tp = t.data<T>();
      for (std::int64_t r = 0; r < targets.rows(); ++r) {
        const std::int64_t target = targets.of(tp, r);
        if (target < 0) continue;
        const T* row = yp + r * m;
        std::int64_t best = 0;
        for (std::int64_t j = 1; j < m; ++j) best = row[j] > row[best] ? j : best;
        totals[0] += best == target;
        totals[1] += 1;
      }
    });
  }
  double value(std::span<const double> totals) const override {
    return totals[1] > 0 ? totals[0] / totals[1] : 0.0;
  }
};

}  // namespace

constexpr const char* kTraits = R"({"better": "max", "conformance": [{}, {"labels": "ids"}]})";

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "token_accuracy",
                   .description =
                       "share of positions (tokens) whose most likely class is the "
                       "target, padding excluded",
                   .traits = kTraits, .factory = dtnn::create_metric<TokenAccuracy>)
