// rmsprop: Hinton's RMSProp (g: gradient, consumed: g = 0 afterwards; s: mean square).
//   rule "textbook" (PyTorch's; rho 0.99, epsilon 1e-8):
//     g = g + decay * w;   s = rho s + (1 - rho) g^2;   w -= lr * g / (sqrt(s) + epsilon)
//   rule "pydtnn" (rho 0.9, epsilon 1e-7): decay outside, epsilon inside the root:
//     s = rho s + (1 - rho) g^2;   w -= lr * (decay * w + g / sqrt(s + epsilon))
// The optimizer is written once for both devices: rmsprop.cpp runs it on the host,
// cuda_rmsprop.cu on a GPU; the mean squares live beside the weights.
#pragma once
#include <cmath>
#include <span>
#include <vector>

#include "dtnn/apply_rule.hpp"
#include "dtnn/optimizer.hpp"

namespace dtnn::optimizers {

inline constexpr const char* kRmsPropDescription = "RMSProp (rule: textbook as PyTorch, or pydtnn)";
inline constexpr const char* kRmsPropParameters =
    R"({"rule": "textbook", "learning_rate": 0.01, "rho": null, "epsilon": null, "decay": 0.0})";

// Rule "textbook": g += decay w; s = rho s + (1 - rho) g^2; w -= lr g / (sqrt(s) + eps).
template <class T>
struct RmsPropRule {
  T lr, rho, eps, decay;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& s) const {
    const T gi = g + decay * w;
    s = rho * s + (T(1) - rho) * gi * gi;
    w -= lr * gi / (std::sqrt(s) + eps);
    g = T(0);
  }
};

// Rule "pydtnn": s = rho s + (1 - rho) g^2; w -= lr (decay w + g / sqrt(s + eps)).
template <class T>
struct PydtnnRmsPropRule {
  T lr, rho, eps, decay;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& s) const {
    s = rho * s + (T(1) - rho) * g * g;
    w -= lr * (decay * w + g / std::sqrt(s + eps));
    g = T(0);
  }
};

struct RmsPropSettings {
  UpdateRule rule = UpdateRule::textbook;
  double lr = 0.01, rho = 0.99, epsilon = 1e-8, decay = 0;

  explicit RmsPropSettings(const Params& p)
      : rule(parse_update_rule(p)),
        lr(p.get_double("learning_rate")),
        rho(number_or_rule_default(p, "rho", rule, 0.99, 0.9)),
        epsilon(number_or_rule_default(p, "epsilon", rule, 1e-8, 1e-7)),
        decay(p.get_double("decay")) {
    if (lr < 0) p.fail("learning_rate", "a number >= 0");
    if (rho < 0 || rho >= 1) p.fail("rho", "a number in [0, 1)");
    if (epsilon <= 0) p.fail("epsilon", "a number > 0");
    if (decay < 0) p.fail("decay", "a number >= 0");
  }
};

// Executor: HostRules or cuda::DeviceRules (dtnn/apply_rule.hpp).
template <class Executor>
class RmsProp final : public Optimizer {
 public:
  explicit RmsProp(const Params& p) : s_(p) {}

  void build(std::span<const Parameter> params) override { square_ = zeros_like(params); }
  double learning_rate() const override { return s_.lr; }
  void set_learning_rate(double lr) override { s_.lr = lr; }
  std::vector<Tensor> state() override { return square_; }

  void update(std::size_t i, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) {
      using T = decltype(z);
      T* w = static_cast<T*>(p.value.raw());
      T* g = static_cast<T*>(p.grad.raw());
      T* s = static_cast<T*>(square_[i].raw());
      const std::int64_t n = p.value.numel();
      const T lr = T(s_.lr), rho = T(s_.rho), eps = T(s_.epsilon), decay = T(s_.decay);
      if (s_.rule == UpdateRule::pydtnn)
        Executor::run(PydtnnRmsPropRule<T>{lr, rho, eps, decay}, n, w, g, s);
      else
        Executor::run(RmsPropRule<T>{lr, rho, eps, decay}, n, w, g, s);
    });
  }

 private:
  RmsPropSettings s_;
  std::vector<Tensor> square_;
};

}  // namespace dtnn::optimizers
