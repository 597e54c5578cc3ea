// cuda_kl_divergence: the CPU loss's KL(q || p) of the label-smoothed targets q from the model's
// log-probabilities y (kl_divergence.cpp has the formulas) on an NVIDIA GPU, for one-hot or soft
// rows and class-id targets (ids at ignore_index: no target). An element per term: forward sums
// the loss, the rows with a target and the targets that are no class id, and reads them back;
// backward sums the rows on the device and its gradient kernel reads them there.
#include "cuda_loss_sum.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"
#include "loss_parameters.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

template <class T>
struct Term {
  const T *y, *t;
  std::size_t classes;
  double smoothing, ignored;
  bool ids;

  // q of element i, or -1 where its row has no target (*bad: the row's target is no class id).
  __device__ double q(std::size_t i, bool* bad) const {
    const std::size_t j = i % classes;
    double target;
    *bad = false;
    if (ids) {
      const long long id = target_id(t, i / classes, classes, ignored, bad);
      if (id < 0) return -1;
      target = static_cast<long long>(j) == id ? 1.0 : 0.0;
    } else {
      target = double(t[i]);
    }
    return (1 - smoothing) * target + smoothing / double(classes);
  }
  // {q (log q - y), 1 once per row with a target, 1 once per row whose target is no class id}.
  __device__ Terms<3> operator()(std::size_t i) const {
    Terms<3> out;
    bool bad = false;
    const double qi = q(i, &bad);
    const bool first = i % classes == 0;
    out.v[2] = first && bad ? 1 : 0;
    if (qi < 0) return out;
    out.v[0] = qi > 0 ? qi * (log(qi) - double(y[i])) : 0.0;
    out.v[1] = first ? 1 : 0;
    return out;
  }
};

// dy = -q / (rows with a target), 0 in the rows without one.
template <class T>
__global__ void gradient_kernel(T* d, Term<T> term, std::size_t n, const double* counted) {
  const double rows = *counted;
  DTNN_GRID_STRIDE(i, n) {
    bool bad = false;
    const double qi = term.q(i, &bad);
    d[i] = qi >= 0 && rows > 0 ? T(-qi / rows) : T(0);
  }
}

class CudaKlDivergence final : public Loss {
  // The term of y and t in their dtype.
  template <class T>
  Term<T> term_of(const Tensor& y, const Tensor& t, const ClassTargets& targets) const {
    return {static_cast<const T*>(y.raw()),
            static_cast<const T*>(t.raw()),
            std::size_t(targets.classes()),
            smoothing_,
            ignore_,
            targets.ids()};
  }

 public:
  explicit CudaKlDivergence(const Params& p)
      : smoothing_(p.get_double("label_smoothing")), ignore_(double(p.get_int("ignore_index"))) {
    if (!(smoothing_ >= 0 && smoothing_ < 1)) p.fail("label_smoothing", "a number in [0, 1)");
  }
  std::string name() const override { return "kl_divergence"; }

  double forward(const Tensor& y, const Tensor& t) override {
    const ClassTargets targets(y, t, "kl_divergence", ignore_);
    const std::array<double, 3> totals = by_dtype(y.dtype(), [&](auto z) {
      const Term<decltype(z)> term = term_of<decltype(z)>(y, t, targets);
      return totals_.read(term, std::size_t(y.numel()));
    });
    if (totals[2] > 0) throw_bad_target(y, t, "kl_divergence", ignore_);
    return totals[1] > 0 ? totals[0] / totals[1] : 0.0;
  }

  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    const ClassTargets targets(y, t, "kl_divergence", ignore_);
    const auto n = std::size_t(y.numel());
    if (n == 0) return;
    by_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const Term<T> term = term_of<T>(y, t, targets);
      const double* totals = totals_.launch(term, n);
      gradient_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dy.raw()), term, n, totals + 1);
      check_launch();
    });
  }

 private:
  double smoothing_, ignore_;
  LossTotals<3> totals_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaKlDivergence(p); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "kl_divergence",
                 "KL divergence of the (smoothed) targets from the predicted distribution, "
                 "log-probabilities in, on an NVIDIA GPU",
                 dtnn::loss_parameters::kKlDivergenceParameters, create)
