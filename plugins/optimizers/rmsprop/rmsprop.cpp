// rmsprop: Hinton's RMSProp (g: gradient, consumed: g = 0 afterwards; s: mean square).
//   rule "textbook" (PyTorch's; rho 0.99, epsilon 1e-8):
//     g = g + decay * w;   s = rho s + (1 - rho) g^2;   w -= lr * g / (sqrt(s) + epsilon)
//   rule "pydtnn" (rho 0.9, epsilon 1e-7): decay outside, epsilon inside the root:
//     s = rho s + (1 - rho) g^2;   w -= lr * (decay * w + g / sqrt(s + epsilon))
#include <span>

#include "dtnn/apply_rule.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/update_rules.hpp"

namespace {

using namespace dtnn;

class RmsProp final : public RmsPropBase {
 public:
  using RmsPropBase::RmsPropBase;

  void update(std::size_t index, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) { apply<decltype(z)>(p, square_[index]); });
  }

 private:
  template <class T>
  void apply(const Parameter& p, Tensor& square) const {
    T* w = p.value.data<T>();
    T* g = p.grad.data<T>();
    const std::int64_t n = p.value.numel();
    const T lr = T(s_.lr), rho = T(s_.rho), eps = T(s_.epsilon), decay = T(s_.decay);
    if (s_.rule == UpdateRule::pydtnn)
      apply_rule(rules::PydtnnRmsProp<T>{lr, rho, eps, decay}, n, w, g, square.data<T>());
    else
      apply_rule(rules::RmsProp<T>{lr, rho, eps, decay}, n, w, g, square.data<T>());
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new RmsProp(p); }

}  // namespace

DTNN_PLUGIN("optimizer", "rmsprop", "RMSProp (rule: textbook as PyTorch, or pydtnn)",
            dtnn::kRmsPropParameters,
            create)
