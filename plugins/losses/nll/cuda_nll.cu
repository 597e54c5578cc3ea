// cuda_nll: the CPU loss's weighted negative log-likelihood (log_likelihood.hpp has the formulas)
// on an NVIDIA GPU, for one-hot and class-id targets (ids at ignore_index ignored). Forward sums
// the loss, its normalizer and the targets that are no class id in one pass and reads the three
// back (the step's one wait); backward sums the normalizer on the device and its gradient kernel
// reads it there, so the host does not wait.
#include "class_weights.hpp"
#include "cuda_loss_sum.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"
#include "loss_parameters.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// {-w y at the target, the target's weight, 1 for a target that is no class id}: a row per i
// (class ids) or an element per i (one-hot rows, w_j t_i).
template <class T>
struct Term {
  const T *y, *t;
  const double* w;
  std::size_t classes;
  double ignored;
  bool ids;
  __device__ Terms<3> operator()(std::size_t i) const {
    Terms<3> out;
    if (ids) {
      bool bad = false;
      const long long id = target_id(t, i, classes, ignored, &bad);
      out.v[2] = bad ? 1 : 0;
      if (id < 0) return out;
      const double wi = weight(w, std::size_t(id), classes);
      out.v[0] = -wi * double(y[i * classes + std::size_t(id)]);
      out.v[1] = wi;
    } else {
      const double wt = weight(w, i, classes) * double(t[i]);
      out.v[0] = t[i] != T(0) ? -wt * double(y[i]) : 0.0;
      out.v[1] = wt;
    }
    return out;
  }
};

// d = -w t / N (one-hot) or -w / W at each row's target id, 0 elsewhere; the normalizer is the
// number of rows, or *total (summed on the device) with weights or ids.
template <class T>
__global__ void gradient_kernel(T* d, Term<T> term, std::size_t n, const double* total,
                                double rows) {
  const double normalizer = total ? *total : rows;
  const T inv_n = normalizer > 0 ? T(1.0 / normalizer) : T(0);
  DTNN_GRID_STRIDE(i, n) {
    const std::size_t j = i % term.classes;
    if (term.ids) {
      bool bad = false;
      const long long id = target_id(term.t, i / term.classes, term.classes, term.ignored, &bad);
      d[i] = id == static_cast<long long>(j) ? -T(weight(term.w, j, term.classes)) * inv_n : T(0);
    } else {
      d[i] = -T(weight(term.w, j, term.classes)) * term.t[i] * inv_n;
    }
  }
}

class CudaNegativeLogLikelihood final : public Loss {
  // The term of y and t in their dtype.
  template <class T>
  Term<T> term_of(const Tensor& y, const Tensor& t, const ClassTargets& targets) const {
    return {static_cast<const T*>(y.raw()),
            static_cast<const T*>(t.raw()),
            device_weights_.data(),
            std::size_t(targets.classes()),
            ignore_,
            targets.ids()};
  }

 public:
  explicit CudaNegativeLogLikelihood(const Params& p)
      : ignore_(double(p.get_int("ignore_index"))),
        weights_(p, "nll"),
        device_weights_(weights_.values()) {}
  std::string name() const override { return "nll"; }

  double forward(const Tensor& y, const Tensor& t) override {
    const ClassTargets targets(y, t, "nll", ignore_);
    weights_.check(targets.classes());
    const std::array<double, 3> totals = by_dtype(y.dtype(), [&](auto z) {
      return totals_.read(term_of<decltype(z)>(y, t, targets), terms(targets, y));
    });
    if (totals[2] > 0) throw_bad_target(y, t, "nll", ignore_);
    const double n = normalized_by_rows(targets) ? double(targets.rows()) : totals[1];
    return n > 0 ? totals[0] / n : 0.0;
  }

  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    const ClassTargets targets(y, t, "nll", ignore_);
    weights_.check(targets.classes());
    const auto n = std::size_t(y.numel());
    if (n == 0) return;
    by_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const Term<T> term = term_of<T>(y, t, targets);
      const double* total =
          normalized_by_rows(targets) ? nullptr : totals_.launch(term, terms(targets, y)) + 1;
      gradient_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dy.raw()), term, n, total, double(targets.rows()));
      check_launch();
    });
  }

 private:
  // One-hot targets without weights are averaged over the rows (log_likelihood.hpp's N).
  bool normalized_by_rows(const ClassTargets& targets) const {
    return !targets.ids() && weights_.empty();
  }
  static std::size_t terms(const ClassTargets& targets, const Tensor& y) {
    return std::size_t(targets.ids() ? targets.rows() : y.numel());
  }

  double ignore_;
  losses::ClassWeights weights_;
  DeviceWeights device_weights_;
  LossTotals<3> totals_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaNegativeLogLikelihood(p); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "nll",
                 "negative log-likelihood of log-probabilities on an NVIDIA GPU; class-id targets "
                 "may be ignored (padding), classes weighted",
                 dtnn::loss_parameters::kNllParameters, create)
