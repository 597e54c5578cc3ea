// categorical_cross_entropy over probabilities p and one-hot (or soft) targets t, rows of n:
//   L = -(1/n) sum_i sum_j t_ij log(max(p_ij, eps))        dL/dp_ij = -t_ij / (n max(p_ij, eps))
// Combined with a softmax in front (the usual case): dL/dlogit_ij = (p_ij - t_ij) / n, exact and
// stable however small p gets.
#include <algorithm>
#include <cmath>

#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class CategoricalCrossEntropy final : public Loss {
 public:
  std::string name() const override { return "categorical_cross_entropy"; }
  bool has_softmax_gradient() const override { return true; }

  double forward(const Tensor& p, const Tensor& t) override {
    return dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const T eps = std::is_same_v<T, float> ? T(1e-7) : T(1e-15);
      double sum = 0;
      for (std::int64_t i = 0; i < p.numel(); ++i)
        if (tp[i] != T(0)) sum -= double(tp[i]) * std::log(double(std::max(pp[i], eps)));
      return sum / static_cast<double>(p.dim(0));
    });
  }

  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const T eps = std::is_same_v<T, float> ? T(1e-7) : T(1e-15), inv_n = T(1) / T(p.dim(0));
      T* d = dy.data<T>();
      for (std::int64_t i = 0; i < p.numel(); ++i) d[i] = -tp[i] * inv_n / std::max(pp[i], eps);
    });
  }

  void backward_through_softmax(const Tensor& p, const Tensor& t, Tensor& dlogits) override {
    dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const T inv_n = T(1) / T(p.dim(0));
      T* d = dlogits.data<T>();
      for (std::int64_t i = 0; i < p.numel(); ++i) d[i] = (pp[i] - tp[i]) * inv_n;
    });
  }
};

Plugin* create(const Params&, const PluginContext&) { return new CategoricalCrossEntropy(); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "categorical_cross_entropy",
                   .description =
                       "cross-entropy of probabilities against one-hot targets; exact gradient "
                       "through softmax",
                   .traits = R"({"default": true})", .factory = create)
