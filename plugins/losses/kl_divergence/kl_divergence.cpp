// kl_divergence: KL(q || p) of a target distribution q from the model's, whose
// log-probabilities y come in (a model ending in log_softmax), rows r of C classes:
//   L = (1/m) sum_r sum_j q[r, j] (log q[r, j] - y[r, j]),   dL/dy[r, j] = -q[r, j] / m
// over the m rows that have a target (PyTorch's KLDivLoss with reduction "batchmean").
// q is the target smoothed by label_smoothing e (Szegedy et al. 2016; the Transformer's 0.1):
// q = (1 - e) t + e / C, t one-hot from a class id (ids at or below ignore_index: no target) or
// the given one-hot or soft row.
#include <algorithm>
#include <cmath>

#include "dtnn/class_targets.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"
#include "loss_parameters.hpp"

namespace {

using namespace dtnn;

class KlDivergence final : public Loss {
 public:
  explicit KlDivergence(const Params& p)
      : smoothing_(p.get_double("label_smoothing")), ignore_(double(p.get_int("ignore_index"))) {
    if (!(smoothing_ >= 0 && smoothing_ < 1)) p.fail("label_smoothing", "a number in [0, 1)");
  }
  std::string name() const override { return "kl_divergence"; }

  double forward(const Tensor& y, const Tensor& t) override {
    return dispatch_dtype(y.dtype(), [&](auto z) { return run<decltype(z)>(y, t, nullptr); });
  }

  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      run<T>(y, t, dy.data<T>());
    });
  }

 private:
  // Without dy, the loss; with dy, the gradient (written whole) and 0, so backward takes no logs.
  template <class T>
  double run(const Tensor& y, const Tensor& t, T* dy) const {
    const T *yp = y.data<T>(), *tp = t.data<T>();
    const ClassTargets targets(y, t, "kl_divergence", ignore_);
    const std::int64_t c = targets.classes();
    const double e = smoothing_, floor = e / double(c);
    std::int64_t counted = 0;
    for (std::int64_t r = 0; r < targets.rows(); ++r)
      counted += !targets.ids() || double(tp[r]) != ignore_;
    if (dy) std::fill_n(dy, y.numel(), T(0));
    double sum = 0;
    for (std::int64_t r = 0; r < targets.rows() && counted > 0; ++r) {
      const std::int64_t id = targets.ids() ? targets.id(tp, r) : -1;
      if (targets.ids() && id < 0) continue;
      for (std::int64_t j = 0; j < c; ++j) {
        const double target = targets.ids() ? (j == id ? 1.0 : 0.0) : double(tp[r * c + j]);
        const double q = (1 - e) * target + floor;
        if (dy)
          dy[r * c + j] = T(-q / double(counted));
        else if (q > 0)
          sum += q * (std::log(q) - double(yp[r * c + j]));
      }
    }
    return counted ? sum / double(counted) : 0.0;
  }

  double smoothing_, ignore_;
};

Plugin* create(const Params& p, const PluginContext&) { return new KlDivergence(p); }

}  // namespace

constexpr const char* kTraits = R"({"conformance": [
    {}, {"params": {"label_smoothing": 0.1}}, {"labels": "ids", "params": {"label_smoothing": 0.1}}]})";

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "kl_divergence",
                   .description =
                       "KL divergence of the (smoothed) targets from the predicted "
                       "distribution, log-probabilities in",
                   .parameters = dtnn::loss_parameters::kKlDivergenceParameters, .traits = kTraits,
                   .factory = create)
