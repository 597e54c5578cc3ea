// binary_cross_entropy over probabilities p (a sigmoid's outputs) and targets t in [0, 1], as the
// mean over all N outputs of the batch (PyTorch's BCELoss, Keras's binary_crossentropy):
//   L = -(1/N) sum_i [t_i log p_i + (1 - t_i) log(1 - p_i)]
//   dL/dp_i = (p_i - t_i) / (N p_i (1 - p_i))
// p is clipped to [eps, 1 - eps] so that neither the loss nor the gradient is infinite.
#include <algorithm>
#include <cmath>

#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

template <class T>
constexpr T clip_eps() {
  return std::is_same_v<T, float> ? T(1e-7) : T(1e-15);
}

class BinaryCrossEntropy final : public Loss {
 public:
  std::string name() const override { return "binary_cross_entropy"; }

  double forward(const Tensor& p, const Tensor& t) override {
    return dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const T eps = clip_eps<T>();
      double sum = 0;
      for (std::int64_t i = 0; i < p.numel(); ++i) {
        const double pi = std::clamp(pp[i], eps, T(1) - eps), ti = tp[i];
        sum -= ti * std::log(pi) + (1.0 - ti) * std::log(1.0 - pi);
      }
      return sum / static_cast<double>(p.numel());
    });
  }

  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const T eps = clip_eps<T>(), inv_n = T(1) / T(p.numel());
      T* d = dy.data<T>();
      for (std::int64_t i = 0; i < p.numel(); ++i) {
        const T pi = std::clamp(pp[i], eps, T(1) - eps);
        d[i] = (pi - tp[i]) * inv_n / (pi * (T(1) - pi));
      }
    });
  }
};

Plugin* create(const Params&, const PluginContext&) { return new BinaryCrossEntropy(); }

}  // namespace

DTNN_PLUGIN("loss", "binary_cross_entropy",
            "mean binary cross-entropy of probabilities (sigmoid outputs) against 0/1 targets",
            "{}", create)
