// lion: EvoLved Sign Momentum (Chen et al., 2023), written once for both devices (lion.cpp on the
// host, cuda_lion.cu on a GPU) against an executor of its rule (dtnn/apply_rule.hpp):
//   c = b1 m + (1 - b1) g;   w -= lr (sign(c) + decay w);   m = b2 m + (1 - b2) g
// State: the momentum m per parameter. The gradient is consumed (g = 0 afterwards).
#pragma once
#include <span>
#include <vector>

#include "dtnn/apply_rule.hpp"
#include "dtnn/optimizer.hpp"

namespace example {

using namespace dtnn;

inline constexpr const char* kParameters =
    R"({"learning_rate": 0.0001, "beta1": 0.9, "beta2": 0.99, "decay": 0.0})";

template <class T>
struct LionRule {
  T lr, b1, b2, decay;
  DTNN_HOST_DEVICE void apply(T& w, T& g, T& m) const {
    const T c = b1 * m + (T(1) - b1) * g;
    const T sign = c > T(0) ? T(1) : c < T(0) ? T(-1) : T(0);
    w -= lr * (sign + decay * w);
    m = b2 * m + (T(1) - b2) * g;
    g = T(0);
  }
};

template <class Executor>
class Lion final : public Optimizer {
 public:
  explicit Lion(const Params& p)
      : lr_(p.get_double("learning_rate")),
        b1_(p.get_double("beta1")),
        b2_(p.get_double("beta2")),
        decay_(p.get_double("decay")) {
    if (lr_ < 0) p.fail("learning_rate", "a number >= 0");
    if (b1_ < 0 || b1_ >= 1) p.fail("beta1", "a number in [0, 1)");
    if (b2_ < 0 || b2_ >= 1) p.fail("beta2", "a number in [0, 1)");
  }
  void build(std::span<const Parameter> params) override { momentum_ = zeros_like(params); }
  double learning_rate() const override { return lr_; }
  void set_learning_rate(double lr) override { lr_ = lr; }
  std::vector<Tensor> state() override { return momentum_; }

  void update(std::size_t i, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) {
      using T = decltype(z);
      Executor::run(LionRule<T>{T(lr_), T(b1_), T(b2_), T(decay_)}, p.value.numel(),
                    static_cast<T*>(p.value.raw()), static_cast<T*>(p.grad.raw()),
                    static_cast<T*>(momentum_[i].raw()));
    });
  }

 private:
  double lr_, b1_, b2_, decay_;
  std::vector<Tensor> momentum_;
};

}  // namespace example
