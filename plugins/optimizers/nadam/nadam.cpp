// nadam: Adam with Nesterov momentum (Dozat) (t: step from 1, g: gradient, consumed afterwards).
//   rule "textbook" (PyTorch's NAdam; lr 0.002, beta1 0.9, epsilon 1e-8, momentum_decay 0.004):
//     g = g + decay * w;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//     mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay));  P_t = mu_1 ... mu_t
//     d = sqrt(v / (1 - b2^t)) + epsilon
//     w -= lr (1 - mu_t) / (1 - P_t) g / d + lr mu_{t+1} / (1 - P_t mu_{t+1}) m / d
//   rule "pydtnn" (lr 0.01, beta1 0.99, epsilon 1e-7; momentum_decay unused):
//     m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//     w -= lr * (decay * w + ((m + (1 - b1) g) / (1 - b1^t)) / sqrt(v / (1 - b2^t) + epsilon))
#include <span>

#include "dtnn/apply_rule.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/update_rules.hpp"

namespace {

using namespace dtnn;

class Nadam final : public NadamBase {
 public:
  using NadamBase::NadamBase;

  void update(std::size_t index, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) { apply<decltype(z)>(p, index); });
  }

 private:
  template <class T>
  void apply(const Parameter& p, std::size_t i) const {
    T* w = p.value.data<T>();
    T* g = p.grad.data<T>();
    T *m = m_[i].data<T>(), *v = v_[i].data<T>();
    const std::int64_t n = p.value.numel();
    const T b1 = T(s_.beta1), b2 = T(s_.beta2), eps = T(s_.epsilon), decay = T(s_.decay);
    if (s_.rule == UpdateRule::pydtnn)
      apply_rule(rules::PydtnnNadam<T>{b1, b2, eps, decay, T(s_.lr), T(inv_c1_), T(inv_c2_)}, n,
                 w, g, m, v);
    else
      apply_rule(rules::Nadam<T>{b1, b2, eps, decay, T(inv_c2_), T(grad_coef_), T(moment_coef_)},
                 n, w, g, m, v);
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new Nadam(p); }

}  // namespace

DTNN_PLUGIN("optimizer", "nadam",
            "Adam with Nesterov momentum (rule: textbook as PyTorch, or pydtnn)",
            dtnn::kNadamParameters,
            create)
