// nll: negative log-likelihood of log-probabilities (a model ending in log_softmax), classes
// weighted by w (class_weights.hpp; all 1 without "weights").
//   Class-id targets (a sequence's tokens), rows r of C log-probabilities y[r, :]:
//     L = -(1/W) sum_r w[t_r] y[r, t_r],  over the rows whose target is not ignore_index,
//     W = sum_r w[t_r] over them (their count unweighted);  dL/dy[r, t_r] = -w[t_r] / W, else 0.
//   One-hot (or soft) targets t, [n, C]:  L = -(1/N) sum_rj w_j t_rj y_rj,  dL/dy = -w t / N,
//     N = n unweighted, sum_rj w_j t_rj weighted.
// The targets are ids when there are fewer of them than predictions.
#include <algorithm>
#include <cmath>
#include <string>

#include "class_weights.hpp"
#include "dtnn/class_targets.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class NegativeLogLikelihood final : public Loss {
 public:
  explicit NegativeLogLikelihood(const Params& p)
      : ignore_(double(p.get_int("ignore_index"))), weights_(p, "nll") {}
  std::string name() const override { return "nll"; }

  double forward(const Tensor& y, const Tensor& t) override {
    return dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *yp = y.data<T>(), *tp = t.data<T>();
      const ClassTargets targets(y, t, "nll", ignore_);
      const std::int64_t m = targets.classes();
      weights_.check(m);
      double sum = 0, total = 0;
      if (!targets.ids()) {
        for (std::int64_t r = 0; r < y.numel() / m; ++r)
          for (std::int64_t j = 0, i = r * m; j < m; ++j, ++i)
            if (tp[i] != T(0)) {
              const double w = weights_.at(j) * double(tp[i]);
              sum -= w * double(yp[i]);
              total += w;
            }
        const double n = weights_.empty() ? double(y.dim(0)) : total;
        return n > 0 ? sum / n : 0.0;
      }
      for (std::int64_t r = 0; r < targets.rows(); ++r) {
        const std::int64_t id = targets.id(tp, r);
        if (id < 0) continue;
        const double w = weights_.at(id);
        sum -= w * double(yp[r * m + id]);
        total += w;
      }
      return total > 0 ? sum / total : 0.0;
    });
  }

  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* tp = t.data<T>();
      T* d = dy.data<T>();
      const ClassTargets targets(y, t, "nll", ignore_);
      const std::int64_t m = targets.classes();
      weights_.check(m);
      if (!targets.ids()) {
        const std::int64_t rows = y.numel() / m;
        double total = 0;
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t j = 0; j < m; ++j) total += weights_.at(j) * double(tp[r * m + j]);
        const double n = weights_.empty() ? double(y.dim(0)) : total;
        const T inv_n = n > 0 ? T(1.0 / n) : T(0);
        for (std::int64_t r = 0; r < rows; ++r)
          for (std::int64_t j = 0, i = r * m; j < m; ++j, ++i)
            d[i] = -T(weights_.at(j)) * tp[i] * inv_n;
        return;
      }
      double total = 0;
      for (std::int64_t r = 0; r < targets.rows(); ++r)
        if (const std::int64_t id = targets.id(tp, r); id >= 0) total += weights_.at(id);
      std::fill_n(d, y.numel(), T(0));
      if (total <= 0) return;
      for (std::int64_t r = 0; r < targets.rows(); ++r)
        if (const std::int64_t id = targets.id(tp, r); id >= 0)
          d[r * m + id] = T(-weights_.at(id) / total);
    });
  }

 private:
  double ignore_;
  losses::ClassWeights weights_;
};

Plugin* create(const Params& p, const PluginContext&) { return new NegativeLogLikelihood(p); }

}  // namespace

// Conformance: one-hot targets, and class ids with one row ignored; each with class weights too.
constexpr const char* kTraits = R"({"aliases": ["negative_log_likelihood", "negative_likelihood"],
    "conformance": [{}, {"labels": "ids"},
    {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}},
    {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}, "labels": "ids"}]})";

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "nll",
                   .description =
                       "negative log-likelihood of log-probabilities (after "
                       "log_softmax); class-id targets may be ignored (padding), classes weighted",
                   .parameters = R"({"ignore_index": -1, "weights": []})", .traits = kTraits,
                   .factory = create)
