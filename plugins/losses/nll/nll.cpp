// nll: negative log-likelihood of log-probabilities (a model ending in log_softmax).
//   Class-id targets (a sequence's tokens), rows r of C log-probabilities y[r, :]:
//     L = -(1/m) sum_r y[r, t_r],  over the m rows whose target is not ignore_index;
//     dL/dy[r, j] = -1/m where j = t_r, else 0.
//   One-hot (or soft) targets t, [n, C]:  L = -(1/n) sum t * y,  dL/dy = -t / n.
// The targets are ids when there are fewer of them than predictions.
#include <algorithm>
#include <cmath>
#include <string>

#include "dtnn/class_targets.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class NegativeLogLikelihood final : public Loss {
 public:
  explicit NegativeLogLikelihood(const Params& p) : ignore_(double(p.get_int("ignore_index"))) {}
  std::string name() const override { return "nll"; }

  double forward(const Tensor& y, const Tensor& t) override {
    return dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *yp = y.data<T>(), *tp = t.data<T>();
      const ClassTargets targets(y, t, "nll", ignore_);
      double sum = 0;
      if (!targets.ids()) {
        for (std::int64_t i = 0; i < y.numel(); ++i)
          if (tp[i] != T(0)) sum -= double(tp[i]) * double(yp[i]);
        return sum / double(y.dim(0));
      }
      std::int64_t counted = 0;
      for (std::int64_t r = 0; r < targets.rows(); ++r) {
        const std::int64_t id = targets.id(tp, r);
        if (id < 0) continue;
        sum -= double(yp[r * targets.classes() + id]);
        ++counted;
      }
      return counted ? sum / double(counted) : 0.0;
    });
  }

  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* tp = t.data<T>();
      T* d = dy.data<T>();
      const ClassTargets targets(y, t, "nll", ignore_);
      if (!targets.ids()) {
        const T inv_n = T(1) / T(y.dim(0));
        for (std::int64_t i = 0; i < y.numel(); ++i) d[i] = -tp[i] * inv_n;
        return;
      }
      std::int64_t counted = 0;
      for (std::int64_t r = 0; r < targets.rows(); ++r) counted += double(tp[r]) != ignore_;
      std::fill_n(d, y.numel(), T(0));
      if (counted == 0) return;
      const T share = T(-1) / T(counted);
      for (std::int64_t r = 0; r < targets.rows(); ++r)
        if (const std::int64_t id = targets.id(tp, r); id >= 0)
          d[r * targets.classes() + id] = share;
    });
  }

 private:
  double ignore_;
};

Plugin* create(const Params& p, const PluginContext&) { return new NegativeLogLikelihood(p); }

}  // namespace

// Conformance: one-hot targets, and class ids with one row ignored.
constexpr const char* kTraits = R"({"conformance": [{}, {"labels": "ids"}]})";

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "nll",
                   .description =
                       "negative log-likelihood of log-probabilities (after "
                       "log_softmax); class-id targets may be ignored (padding)",
                   .parameters = R"({"ignore_index": -1})", .traits = kTraits, .factory = create)
