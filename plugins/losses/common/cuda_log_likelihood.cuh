// The weighted log-likelihood of log-probabilities on the GPU (log_likelihood.hpp has the
// formulas), for the CUDA twins of nll (log-probabilities in) and cross_entropy (logits in, their
// log_softmax taken first): one-hot rows or class ids (ignore_index ignored), classes weighted.
// The loss sums its value, its normalizer and the targets that are no class id in one pass and
// reads the three back (the step's one wait); the gradient sums the normalizer on the device and
// its kernel reads it there, so the host does not wait. CUDA code: include it from .cu files.
#pragma once
#include <string>

#include "class_weights.hpp"
#include "cuda_loss_sum.cuh"
#include "dtnn/class_targets.hpp"
#include "dtnn/params.hpp"

namespace dtnn::cuda {

// {-w y at the target, the target's weight, 1 for a target that is no class id}: a row per i
// (class ids) or an element per i (one-hot rows, w_j t_i).
template <class T>
struct LogLikelihoodTerm {
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
__global__ void log_likelihood_gradient_kernel(T* d, LogLikelihoodTerm<T> term, std::size_t n,
                                               const double* total, double rows) {
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

class LogLikelihood {
 public:
  // who: the loss's name in its errors.
  LogLikelihood(const Params& p, std::string who)
      : who_(std::move(who)),
        ignore_(double(p.get_int("ignore_index"))),
        weights_(p, who_),
        device_weights_(weights_.values()) {}

  // The targets t of predictions shaped like `like` (shapes only: both may live on the GPU).
  ClassTargets targets(const Tensor& like, const Tensor& t) const {
    const ClassTargets targets(like, t, who_, ignore_);
    weights_.check(targets.classes());
    return targets;
  }

  // The loss of the log-probabilities logp (device memory shaped like `like`).
  double loss(const void* logp, const Tensor& like, const Tensor& t) {
    const ClassTargets tg = targets(like, t);
    const std::array<double, 3> totals = by_dtype(like.dtype(), [&](auto z) {
      return totals_.read(term_of<decltype(z)>(logp, t, tg), terms(tg, like));
    });
    if (totals[2] > 0) throw_bad_target(like, t, who_, ignore_);
    const double n = normalized_by_rows(tg) ? double(tg.rows()) : totals[1];
    return n > 0 ? totals[0] / n : 0.0;
  }

  // d = dL/d(logp), written whole (device memory shaped like `like`).
  void gradient(const void* logp, const Tensor& like, const Tensor& t, void* d) {
    const ClassTargets tg = targets(like, t);
    const auto n = std::size_t(like.numel());
    if (n == 0) return;
    by_dtype(like.dtype(), [&](auto z) {
      using T = decltype(z);
      const LogLikelihoodTerm<T> term = term_of<T>(logp, t, tg);
      const double* total =
          normalized_by_rows(tg) ? nullptr : totals_.launch(term, terms(tg, like)) + 1;
      log_likelihood_gradient_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(d), term, n, total, double(tg.rows()));
      check_launch();
    });
  }

 private:
  template <class T>
  LogLikelihoodTerm<T> term_of(const void* logp, const Tensor& t, const ClassTargets& tg) const {
    return {static_cast<const T*>(logp),
            static_cast<const T*>(t.raw()),
            device_weights_.data(),
            std::size_t(tg.classes()),
            ignore_,
            tg.ids()};
  }
  // One-hot targets without weights are averaged over the rows (log_likelihood.hpp's N).
  bool normalized_by_rows(const ClassTargets& tg) const { return !tg.ids() && weights_.empty(); }
  static std::size_t terms(const ClassTargets& tg, const Tensor& like) {
    return std::size_t(tg.ids() ? tg.rows() : like.numel());
  }

  std::string who_;
  double ignore_;
  losses::ClassWeights weights_;
  DeviceWeights device_weights_;
  LossTotals<3> totals_;
};

}  // namespace dtnn::cuda
