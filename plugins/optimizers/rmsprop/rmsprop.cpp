// rmsprop: Hinton's RMSProp (g: gradient, consumed: g = 0 afterwards; s: mean square).
//   rule "textbook" (PyTorch's; rho 0.99, epsilon 1e-8):
//     g = g + decay * w;   s = rho s + (1 - rho) g^2;   w -= lr * g / (sqrt(s) + epsilon)
//   rule "pydtnn" (rho 0.9, epsilon 1e-7): decay outside, epsilon inside the root:
//     s = rho s + (1 - rho) g^2;   w -= lr * (decay * w + g / sqrt(s + epsilon))
#include <cmath>
#include <span>

#include "dtnn/optimizer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class RmsProp final : public Optimizer {
 public:
  explicit RmsProp(const Params& p)
      : rule_(parse_update_rule(p)),
        lr_(p.get_double("learning_rate")),
        rho_(number_or_rule_default(p, "rho", rule_, 0.99, 0.9)),
        epsilon_(number_or_rule_default(p, "epsilon", rule_, 1e-8, 1e-7)),
        decay_(p.get_double("decay")) {
    if (lr_ < 0) p.fail("learning_rate", "a number >= 0");
    if (rho_ < 0 || rho_ >= 1) p.fail("rho", "a number in [0, 1)");
    if (epsilon_ <= 0) p.fail("epsilon", "a number > 0");
    if (decay_ < 0) p.fail("decay", "a number >= 0");
  }

  void build(std::span<const Parameter> params) override { square_ = zeros_like(params); }
  double learning_rate() const override { return lr_; }
  void set_learning_rate(double lr) override { lr_ = lr; }
  std::vector<Tensor> state() override { return square_; }

  void update(std::size_t index, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) { apply<decltype(z)>(p, square_[index]); });
  }

 private:
  template <class T>
  void apply(const Parameter& p, Tensor& square) const {
    T* w_all = p.value.data<T>();
    T* g_all = p.grad.data<T>();
    T* s_all = square.data<T>();
    const T lr = T(lr_), rho = T(rho_), eps = T(epsilon_), decay = T(decay_);
    const bool pydtnn = rule_ == UpdateRule::pydtnn;
    parallel_chunks(p.value.numel(), kParallelGrain, [=](std::int64_t begin, std::int64_t end) {
      T* __restrict w = w_all;
      T* __restrict g = g_all;
      T* __restrict s = s_all;
      if (pydtnn) {
        for (std::int64_t i = begin; i < end; ++i) {
          s[i] = rho * s[i] + (T(1) - rho) * g[i] * g[i];
          w[i] -= lr * (decay * w[i] + g[i] / std::sqrt(s[i] + eps));
          g[i] = T(0);
        }
        return;
      }
      for (std::int64_t i = begin; i < end; ++i) {
        const T gi = g[i] + decay * w[i];
        s[i] = rho * s[i] + (T(1) - rho) * gi * gi;
        w[i] -= lr * gi / (std::sqrt(s[i]) + eps);
        g[i] = T(0);
      }
    });
  }

  UpdateRule rule_;
  double lr_, rho_, epsilon_, decay_;
  std::vector<Tensor> square_;
};

Plugin* create(const Params& p, const PluginContext&) { return new RmsProp(p); }

}  // namespace

DTNN_PLUGIN("optimizer", "rmsprop", "RMSProp (rule: textbook as PyTorch, or pydtnn)",
            R"({"rule": "textbook", "learning_rate": 0.01, "rho": null, "epsilon": null,
                "decay": 0.0})",
            create)
