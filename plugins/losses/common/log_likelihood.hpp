// The weighted negative log-likelihood of log-probabilities y (rows of C classes) against class-id
// or one-hot targets, shared by nll (log-probabilities in) and cross_entropy (logits in, their
// log_softmax taken first). Classes weighted by w (class_weights.hpp; all 1 without weights):
//   class ids:  L = -(1/W) sum_r w[t_r] y[r, t_r] over the rows not ignored, W = sum_r w[t_r]
//               (their count unweighted);  dL/dy[r, t_r] = -w[t_r] / W, 0 elsewhere.
//   one-hot:    L = -(1/N) sum_rj w_j t_rj y_rj,  dL/dy = -w t / N,
//               N = the rows unweighted, sum_rj w_j t_rj weighted.
#pragma once
#include <algorithm>
#include <cstdint>

#include "class_weights.hpp"
#include "dtnn/class_targets.hpp"

namespace dtnn::losses {

// N or W above.
template <class T>
double log_likelihood_normalizer(const T* t, const ClassTargets& targets,
                                 const ClassWeights& weights) {
  const std::int64_t m = targets.classes();
  double total = 0;
  if (targets.ids()) {
    for (std::int64_t r = 0; r < targets.rows(); ++r)
      if (const std::int64_t id = targets.id(t, r); id >= 0) total += weights.at(id);
    return total;
  }
  if (weights.empty()) return double(targets.rows());
  for (std::int64_t r = 0; r < targets.rows(); ++r)
    for (std::int64_t j = 0; j < m; ++j) total += weights.at(j) * double(t[r * m + j]);
  return total;
}

template <class T>
double log_likelihood_loss(const T* y, const T* t, const ClassTargets& targets,
                           const ClassWeights& weights) {
  const std::int64_t m = targets.classes();
  weights.check(m);
  double sum = 0;
  for (std::int64_t r = 0; r < targets.rows(); ++r) {
    if (targets.ids()) {
      if (const std::int64_t id = targets.id(t, r); id >= 0)
        sum -= weights.at(id) * double(y[r * m + id]);
      continue;
    }
    for (std::int64_t j = 0, i = r * m; j < m; ++j, ++i)
      if (t[i] != T(0)) sum -= weights.at(j) * double(t[i]) * double(y[i]);
  }
  const double n = log_likelihood_normalizer(t, targets, weights);
  return n > 0 ? sum / n : 0.0;
}

// d = dL/dy, written whole.
template <class T>
void log_likelihood_gradient(const T* t, T* d, const ClassTargets& targets,
                             const ClassWeights& weights) {
  const std::int64_t m = targets.classes();
  weights.check(m);
  const double n = log_likelihood_normalizer(t, targets, weights);
  const T inv_n = n > 0 ? T(1.0 / n) : T(0);
  if (!targets.ids()) {
    for (std::int64_t r = 0; r < targets.rows(); ++r)
      for (std::int64_t j = 0, i = r * m; j < m; ++j, ++i) d[i] = -T(weights.at(j)) * t[i] * inv_n;
    return;
  }
  std::fill_n(d, targets.rows() * m, T(0));
  for (std::int64_t r = 0; r < targets.rows(); ++r)
    if (const std::int64_t id = targets.id(t, r); id >= 0)
      d[r * m + id] = -T(weights.at(id)) * inv_n;
}

}  // namespace dtnn::losses
