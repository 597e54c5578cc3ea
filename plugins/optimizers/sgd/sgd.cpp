// sgd: stochastic gradient descent with momentum, Nesterov momentum and weight decay
// (g: gradient, v: velocity, w: weights). The gradient is consumed: g = 0 afterwards.
//   rule "textbook" (PyTorch's; momentum defaults to 0):
//     g = g + decay * w;   v = momentum * v + g;   w -= lr * (nesterov ? g + momentum * v : v)
//   rule "pydtnn" (momentum defaults to 0.9): decay acts on w directly, not through v:
//     v = momentum * v + g;   w -= lr * (decay * w + (nesterov ? g + momentum * v : v))
// With momentum 0 both are w -= lr * (g + decay * w).
#include <span>

#include "dtnn/apply_rule.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/update_rules.hpp"

namespace {

using namespace dtnn;

class Sgd final : public SgdBase {
 public:
  using SgdBase::SgdBase;

  void update(std::size_t index, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) { apply<decltype(z)>(p, velocity_[index]); });
  }

 private:
  template <class T>
  void apply(const Parameter& p, Tensor& velocity) const {
    T* w = p.value.data<T>();
    T* g = p.grad.data<T>();
    const std::int64_t n = p.value.numel();
    const T lr = T(s_.lr), mu = T(s_.momentum), decay = T(s_.decay);
    if (!velocity.defined())  // momentum 0: no velocity is kept
      apply_rule(rules::Sgd<T>{lr, decay}, n, w, g);
    else if (s_.rule == UpdateRule::pydtnn)
      apply_rule(rules::PydtnnSgdMomentum<T>{lr, mu, decay, s_.nesterov}, n, w, g,
                 velocity.data<T>());
    else
      apply_rule(rules::SgdMomentum<T>{lr, mu, decay, s_.nesterov}, n, w, g, velocity.data<T>());
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new Sgd(p); }

}  // namespace

DTNN_PLUGIN("optimizer", "sgd",
            "SGD with momentum, Nesterov and weight decay (rule: textbook as PyTorch, or pydtnn)",
            dtnn::kSgdParameters,
            create)
