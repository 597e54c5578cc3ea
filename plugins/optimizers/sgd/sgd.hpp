// sgd: stochastic gradient descent with momentum, Nesterov momentum and weight decay
// (g: gradient, v: velocity, w: weights). The gradient is consumed: g = 0 afterwards.
//   rule "textbook" (PyTorch's; momentum defaults to 0):
//     g = g + decay * w;   v = momentum * v + g;   w -= lr * (nesterov ? g + momentum * v : v)
//   rule "pydtnn" (momentum defaults to 0.9): decay acts on w directly, not through v:
//     v = momentum * v + g;   w -= lr * (decay * w + (nesterov ? g + momentum * v : v))
// With momentum 0 both are w -= lr * (g + decay * w).
// The optimizer is written once for both devices: sgd.cpp runs it on the host, cuda_sgd.cu on a
// GPU; the velocities live beside the weights and are checkpointed alike.
#pragma once
#include <span>
#include <vector>

#include "dtnn/apply_rule.hpp"
#include "dtnn/optimizer.hpp"

namespace dtnn::optimizers {

inline constexpr const char* kSgdDescription =
    "SGD with momentum, Nesterov and weight decay (rule: textbook as PyTorch, or pydtnn)";
inline constexpr const char* kSgdParameters =
    R"({"rule": "textbook", "learning_rate": 0.01, "momentum": null, "nesterov": false,
        "decay": 0.0})";

// Without momentum (both rules): w -= lr (g + decay w).
template <class T>
struct SgdRule {
  T lr, decay;
  DTNN_HOST_DEVICE void apply(T& w, T& g) const {
    w -= lr * (g + decay * w);
    g = T(0);
  }
};

// With momentum, rule "textbook": g += decay w; v = mu v + g; w -= lr (nesterov ? g + mu v : v).
template <class T>
struct SgdMomentumRule {
  T lr, mu, decay;
  bool nesterov;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& v) const {
    const T gi = g + decay * w;
    v = mu * v + gi;
    w -= lr * (nesterov ? gi + mu * v : v);
    g = T(0);
  }
};

// With momentum, rule "pydtnn": v = mu v + g; w -= lr (decay w + (nesterov ? g + mu v : v)).
template <class T>
struct PydtnnSgdMomentumRule {
  T lr, mu, decay;
  bool nesterov;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& v) const {
    v = mu * v + g;
    w -= lr * (decay * w + (nesterov ? g + mu * v : v));
    g = T(0);
  }
};

struct SgdSettings {
  UpdateRule rule = UpdateRule::textbook;
  double lr = 0.01, momentum = 0, decay = 0;
  bool nesterov = false;

  explicit SgdSettings(const Params& p)
      : rule(parse_update_rule(p)),
        lr(p.get_double("learning_rate")),
        momentum(number_or_rule_default(p, "momentum", rule, 0.0, 0.9)),
        decay(p.get_double("decay")),
        nesterov(p.get_bool("nesterov")) {
    if (lr < 0) p.fail("learning_rate", "a number >= 0");
    if (momentum < 0 || momentum >= 1) p.fail("momentum", "a number in [0, 1)");
    if (decay < 0) p.fail("decay", "a number >= 0");
    if (nesterov && momentum == 0) p.fail("nesterov", "false when momentum is 0");
  }
};

// Executor: HostRules or cuda::DeviceRules (dtnn/apply_rule.hpp).
template <class Executor>
class Sgd final : public Optimizer {
 public:
  explicit Sgd(const Params& p) : s_(p) {}

  // A velocity per parameter (an empty tensor each when momentum is 0).
  void build(std::span<const Parameter> params) override {
    velocity_ = s_.momentum > 0 ? zeros_like(params) : std::vector<Tensor>(params.size());
  }
  double learning_rate() const override { return s_.lr; }
  void set_learning_rate(double lr) override { s_.lr = lr; }
  std::vector<Tensor> state() override {
    return s_.momentum > 0 ? velocity_ : std::vector<Tensor>{};
  }

  void update(std::size_t index, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) {
      using T = decltype(z);
      T* w = static_cast<T*>(p.value.raw());
      T* g = static_cast<T*>(p.grad.raw());
      T* v = static_cast<T*>(velocity_[index].raw());
      const std::int64_t n = p.value.numel();
      const T lr = T(s_.lr), mu = T(s_.momentum), decay = T(s_.decay);
      if (!velocity_[index].defined())
        Executor::run(SgdRule<T>{lr, decay}, n, w, g);
      else if (s_.rule == UpdateRule::pydtnn)
        Executor::run(PydtnnSgdMomentumRule<T>{lr, mu, decay, s_.nesterov}, n, w, g, v);
      else
        Executor::run(SgdMomentumRule<T>{lr, mu, decay, s_.nesterov}, n, w, g, v);
    });
  }

 private:
  SgdSettings s_;
  std::vector<Tensor> velocity_;
};

}  // namespace dtnn::optimizers
