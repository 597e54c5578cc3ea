// nadam: Adam with Nesterov momentum (Dozat) (t: step from 1, g: gradient, consumed afterwards).
//   rule "textbook" (PyTorch's NAdam; lr 0.002, beta1 0.9, epsilon 1e-8, momentum_decay 0.004):
//     g = g + decay * w;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//     mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay));  P_t = mu_1 ... mu_t
//     d = sqrt(v / (1 - b2^t)) + epsilon
//     w -= lr (1 - mu_t) / (1 - P_t) g / d + lr mu_{t+1} / (1 - P_t mu_{t+1}) m / d
//   rule "pydtnn" (lr 0.01, beta1 0.99, epsilon 1e-7; momentum_decay unused):
//     m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//     w -= lr * (decay * w + ((m + (1 - b1) g) / (1 - b1^t)) / sqrt(v / (1 - b2^t) + epsilon))
// The optimizer is written once for both devices: nadam.cpp runs it on the host, cuda_nadam.cu on
// a GPU. The moments live beside the weights; t and P_t are a host float64 [2] tensor.
#pragma once
#include <cmath>

#include "adam_settings.hpp"
#include "dtnn/apply_rule.hpp"

namespace dtnn::optimizers {

inline constexpr const char* kNadamDescription =
    "Adam with Nesterov momentum (rule: textbook as PyTorch, or pydtnn)";
inline constexpr const char* kNadamParameters =
    R"({"rule": "textbook", "learning_rate": null, "beta1": null, "beta2": 0.999,
        "epsilon": null, "decay": 0.0, "momentum_decay": 0.004})";

// Rule "textbook", with this step's coefficients grad_coef = lr (1 - mu_t) / (1 - P_t),
// moment_coef = lr mu_{t+1} / (1 - P_t mu_{t+1}), inv_c2 = 1 / (1 - b2^t).
template <class T>
struct NadamRule {
  T b1, b2, eps, decay, inv_c2, grad_coef, moment_coef;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& m, T& v) const {
    const T gj = g + decay * w;
    m = b1 * m + (T(1) - b1) * gj;
    v = b2 * v + (T(1) - b2) * gj * gj;
    const T d = std::sqrt(v * inv_c2) + eps;
    w -= (grad_coef * gj + moment_coef * m) / d;
    g = T(0);
  }
};

// Rule "pydtnn": inv_c1 = 1 / (1 - b1^t), inv_c2 = 1 / (1 - b2^t).
template <class T>
struct PydtnnNadamRule {
  T b1, b2, eps, decay, lr, inv_c1, inv_c2;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& m, T& v) const {
    m = b1 * m + (T(1) - b1) * g;
    v = b2 * v + (T(1) - b2) * g * g;
    const T mt = (m + (T(1) - b1) * g) * inv_c1;
    w -= lr * (decay * w + mt / std::sqrt(v * inv_c2 + eps));
    g = T(0);
  }
};

struct NadamSettings : AdamSettings {
  double momentum_decay = 0.004;
  explicit NadamSettings(const Params& p)
      : AdamSettings(p, 0.002), momentum_decay(p.get_double("momentum_decay")) {
    if (momentum_decay < 0) p.fail("momentum_decay", "a number >= 0");
  }
};

// Executor: HostRules or cuda::DeviceRules (dtnn/apply_rule.hpp).
template <class Executor>
class Nadam final : public Optimizer {
 public:
  explicit Nadam(const Params& p) : s_(p) {}

  void build(std::span<const Parameter> params) override {
    state_.build(params, 2);                  // t, and P_t
    state_.counters.data<double>()[1] = 1.0;  // P_0
  }
  double learning_rate() const override { return s_.lr; }
  void set_learning_rate(double lr) override { s_.lr = lr; }
  std::vector<Tensor> state() override { return state_.state(); }

  // This step's coefficients.
  void begin_step() override {
    double* c = state_.counters.data<double>();
    const double t = ++c[0];
    inv_c2_ = 1.0 / (1.0 - std::pow(s_.beta2, t));
    if (s_.rule == UpdateRule::pydtnn) {
      inv_c1_ = 1.0 / (1.0 - std::pow(s_.beta1, t));
      return;
    }
    const double mu = s_.beta1 * (1.0 - 0.5 * std::pow(0.96, t * s_.momentum_decay));
    const double mu_next = s_.beta1 * (1.0 - 0.5 * std::pow(0.96, (t + 1) * s_.momentum_decay));
    c[1] *= mu;
    grad_coef_ = s_.lr * (1.0 - mu) / (1.0 - c[1]);
    moment_coef_ = s_.lr * mu_next / (1.0 - c[1] * mu_next);
  }

  void update(std::size_t i, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) {
      using T = decltype(z);
      T* w = static_cast<T*>(p.value.raw());
      T* g = static_cast<T*>(p.grad.raw());
      T* m = static_cast<T*>(state_.m[i].raw());
      T* v = static_cast<T*>(state_.v[i].raw());
      const std::int64_t n = p.value.numel();
      const T b1 = T(s_.beta1), b2 = T(s_.beta2), eps = T(s_.epsilon), decay = T(s_.decay);
      if (s_.rule == UpdateRule::pydtnn)
        Executor::run(PydtnnNadamRule<T>{b1, b2, eps, decay, T(s_.lr), T(inv_c1_), T(inv_c2_)}, n,
                      w, g, m, v);
      else
        Executor::run(NadamRule<T>{b1, b2, eps, decay, T(inv_c2_), T(grad_coef_), T(moment_coef_)},
                      n, w, g, m, v);
    });
  }

 private:
  NadamSettings s_;
  Moments state_;
  double inv_c1_ = 1, inv_c2_ = 1, grad_coef_ = 0, moment_coef_ = 0;  // of the current step
};

}  // namespace dtnn::optimizers
