// adam: Kingma & Ba (t: step count from 1, g: gradient, consumed: g = 0 afterwards).
//   rule "textbook" (PyTorch's; lr 0.001, beta1 0.9, epsilon 1e-8):
//     g = g + decay * w;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//     w -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + epsilon)
//   rule "pydtnn" (lr 0.01, beta1 0.99, epsilon 1e-7): decay outside the moments, epsilon inside
//   the root:
//     m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//     w -= lr * (decay * w + (m / (1 - b1^t)) / sqrt(v / (1 - b2^t) + epsilon))
//   (PyDTNN's current CPU code divides by (1 - b)^t instead of 1 - b^t, which its own comments and
//   earlier releases do not; dtnn follows the formula.)
// The optimizer is written once for both devices: adam.cpp runs it on the host, cuda_adam.cu on a
// GPU. The moments live beside the weights; the step count is a host float64 [1] tensor.
#pragma once
#include <cmath>

#include "adam_settings.hpp"
#include "dtnn/apply_rule.hpp"

namespace dtnn::optimizers {

inline constexpr const char* kAdamDescription =
    "Adam with bias correction and weight decay (rule: textbook as PyTorch, or pydtnn)";
inline constexpr const char* kAdamParameters =
    R"({"rule": "textbook", "learning_rate": null, "beta1": null, "beta2": 0.999,
        "epsilon": null, "decay": 0.0})";

// Rule "textbook". inv_sqrt_c2 = 1/sqrt(1 - b2^t), step = lr/(1 - b1^t).
template <class T>
struct AdamRule {
  T b1, b2, eps, decay, step, inv_sqrt_c2;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& m, T& v) const {
    const T gj = g + decay * w;
    m = b1 * m + (T(1) - b1) * gj;
    v = b2 * v + (T(1) - b2) * gj * gj;
    w -= step * m / (std::sqrt(v) * inv_sqrt_c2 + eps);
    g = T(0);
  }
};

// Rule "pydtnn". inv_c2 = 1/(1 - b2^t), step = lr/(1 - b1^t), lr_decay = lr * decay.
template <class T>
struct PydtnnAdamRule {
  T b1, b2, eps, lr_decay, step, inv_c2;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& m, T& v) const {
    m = b1 * m + (T(1) - b1) * g;
    v = b2 * v + (T(1) - b2) * g * g;
    w -= lr_decay * w + step * m / std::sqrt(v * inv_c2 + eps);
    g = T(0);
  }
};

// Executor: HostRules or cuda::DeviceRules (dtnn/apply_rule.hpp).
template <class Executor>
class Adam final : public Optimizer {
 public:
  explicit Adam(const Params& p) : s_(p, 0.001) {}

  void build(std::span<const Parameter> params) override { state_.build(params, 1); }
  double learning_rate() const override { return s_.lr; }
  void set_learning_rate(double lr) override { s_.lr = lr; }
  std::vector<Tensor> state() override { return state_.state(); }

  // The bias corrections of step t: c1 = 1 - beta1^t, c2 = 1 - beta2^t.
  void begin_step() override {
    const double t = ++state_.counters.data<double>()[0];
    c1_ = 1.0 - std::pow(s_.beta1, t);
    c2_ = 1.0 - std::pow(s_.beta2, t);
  }

  void update(std::size_t i, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) {
      using T = decltype(z);
      T* w = static_cast<T*>(p.value.raw());
      T* g = static_cast<T*>(p.grad.raw());
      T* m = static_cast<T*>(state_.m[i].raw());
      T* v = static_cast<T*>(state_.v[i].raw());
      const std::int64_t n = p.value.numel();
      const T b1 = T(s_.beta1), b2 = T(s_.beta2), eps = T(s_.epsilon), step = T(s_.lr / c1_);
      if (s_.rule == UpdateRule::pydtnn)
        Executor::run(PydtnnAdamRule<T>{b1, b2, eps, T(s_.lr * s_.decay), step, T(1.0 / c2_)}, n, w,
                      g, m, v);
      else
        Executor::run(AdamRule<T>{b1, b2, eps, T(s_.decay), step, T(1.0 / std::sqrt(c2_))}, n, w, g,
                      m, v);
    });
  }

 private:
  AdamSettings s_;
  Moments state_;
  double c1_ = 1, c2_ = 1;
};

}  // namespace dtnn::optimizers
