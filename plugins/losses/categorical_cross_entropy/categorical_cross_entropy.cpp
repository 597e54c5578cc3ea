// categorical_cross_entropy over probabilities p and one-hot (or soft) targets t, rows of n,
// classes weighted by w (class_weights.hpp; all 1 without "weights"):
//   L = -(1/N) sum_i sum_j w_j t_ij log(max(p_ij, eps)),  N = n unweighted, sum_ij w_j t_ij else
//   dL/dp_ij = -w_j t_ij / (N max(p_ij, eps))     (eps: probability_floor.hpp)
// Combined with a softmax in front (the usual case): dL/dlogit_ij = (p_ij s_i - w_j t_ij) / N with
// s_i = sum_k w_k t_ik ((p_ij - t_ij) / n unweighted), exact and stable however small p gets.
#include <algorithm>
#include <cmath>

#include "class_weights.hpp"
#include "dtnn/class_targets.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"
#include "log_likelihood.hpp"
#include "probability_floor.hpp"

namespace {

using namespace dtnn;

class CategoricalCrossEntropy final : public Loss {
 public:
  explicit CategoricalCrossEntropy(const Params& p)
      : weights_(p, "categorical_cross_entropy"), floor_(p) {}
  std::string name() const override { return "categorical_cross_entropy"; }
  bool has_softmax_gradient() const override { return true; }

  double forward(const Tensor& p, const Tensor& t) override {
    return dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const T eps = floor_.get<T>();
      const std::int64_t m = p.dim(1);
      weights_.check(m);
      double sum = 0;
      for (std::int64_t r = 0; r < p.dim(0); ++r)
        for (std::int64_t j = 0, i = r * m; j < m; ++j, ++i)
          if (tp[i] != T(0))
            sum -= weights_.at(j) * double(tp[i]) * std::log(double(std::max(pp[i], eps)));
      const double n = normalizer(p, t);
      return n > 0 ? sum / n : 0.0;
    });
  }

  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const T eps = floor_.get<T>();
      const std::int64_t m = p.dim(1);
      weights_.check(m);
      const double n = normalizer(p, t);
      const T inv_n = n > 0 ? T(1.0 / n) : T(0);
      T* d = dy.data<T>();
      for (std::int64_t r = 0; r < p.dim(0); ++r)
        for (std::int64_t j = 0, i = r * m; j < m; ++j, ++i)
          d[i] = -T(weights_.at(j)) * tp[i] * inv_n / std::max(pp[i], eps);
    });
  }

  void backward_through_softmax(const Tensor& p, const Tensor& t, Tensor& dlogits) override {
    dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const std::int64_t m = p.dim(1);
      weights_.check(m);
      const double n = normalizer(p, t);
      const T inv_n = n > 0 ? T(1.0 / n) : T(0);
      T* d = dlogits.data<T>();
      if (weights_.empty()) {
        for (std::int64_t i = 0; i < p.numel(); ++i) d[i] = (pp[i] - tp[i]) * inv_n;
        return;
      }
      for (std::int64_t r = 0; r < p.dim(0); ++r) {
        T s = 0;
        for (std::int64_t j = 0; j < m; ++j) s += T(weights_.at(j)) * tp[r * m + j];
        for (std::int64_t j = 0; j < m; ++j) {
          const std::int64_t i = r * m + j;
          d[i] = (pp[i] * s - T(weights_.at(j)) * tp[i]) * inv_n;
        }
      }
    });
  }

 private:
  // N: the rows unweighted; the targets' total weight weighted (log_likelihood.hpp's).
  double normalizer(const Tensor& p, const Tensor& t) const {
    return dispatch_dtype(t.dtype(), [&](auto z) {
      using V = decltype(z);
      return losses::log_likelihood_normalizer(
          t.data<V>(), ClassTargets(p, t, "categorical_cross_entropy"), weights_);
    });
  }

  losses::ClassWeights weights_;
  losses::ProbabilityFloor floor_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CategoricalCrossEntropy(p); }

}  // namespace

// Conformance: unweighted, and with class weights.
constexpr const char* kTraits = R"({"default": true, "conformance": [
    {}, {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}}, {"params": {"eps": 1e-8}}]})";

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "categorical_cross_entropy",
                   .description =
                       "cross-entropy of probabilities against one-hot targets, classes "
                       "optionally weighted; exact gradient through softmax",
                   .parameters = R"({"weights": [], "eps": 0.0})", .traits = kTraits,
                   .factory = create)
