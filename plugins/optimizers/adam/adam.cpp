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
#include <span>

#include "dtnn/apply_rule.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/update_rules.hpp"

namespace {

using namespace dtnn;

class Adam final : public AdamBase {
 public:
  using AdamBase::AdamBase;

  void update(std::size_t index, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) { apply<decltype(z)>(p, index); });
  }

 private:
  template <class T>
  void apply(const Parameter& p, std::size_t i) {
    T* w = p.value.data<T>();
    T* g = p.grad.data<T>();
    T *m = m_[i].data<T>(), *v = v_[i].data<T>();
    const std::int64_t n = p.value.numel();
    if (s_.rule == UpdateRule::pydtnn)
      apply_rule(
          rules::PydtnnAdam<T>::from(s_.beta1, s_.beta2, s_.epsilon, s_.decay, s_.lr, c1_, c2_),
          n, w, g, m, v);
    else
      apply_rule(rules::Adam<T>::from(s_.beta1, s_.beta2, s_.epsilon, s_.decay, s_.lr, c1_, c2_),
                 n, w, g, m, v);
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new Adam(p); }

}  // namespace

DTNN_PLUGIN("optimizer", "adam",
            "Adam with bias correction and weight decay (rule: textbook as PyTorch, or pydtnn)",
            dtnn::kAdamParameters,
            create)
