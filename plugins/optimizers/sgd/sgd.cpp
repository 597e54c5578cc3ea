// sgd: stochastic gradient descent with momentum, Nesterov momentum and weight decay
// (g: gradient, v: velocity, w: weights). The gradient is consumed: g = 0 afterwards.
//   rule "textbook" (PyTorch's; momentum defaults to 0):
//     g = g + decay * w;   v = momentum * v + g;   w -= lr * (nesterov ? g + momentum * v : v)
//   rule "pydtnn" (momentum defaults to 0.9): decay acts on w directly, not through v:
//     v = momentum * v + g;   w -= lr * (decay * w + (nesterov ? g + momentum * v : v))
// With momentum 0 both are w -= lr * (g + decay * w).
#include <span>

#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "dtnn/parallel.hpp"
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
    T* w_all = p.value.data<T>();
    T* g_all = p.grad.data<T>();
    T* v_all = velocity.defined() ? velocity.data<T>() : nullptr;
    const T lr = T(s_.lr), mu = T(s_.momentum), decay = T(s_.decay);
    const bool nesterov = s_.nesterov, pydtnn = s_.rule == UpdateRule::pydtnn;
    parallel_chunks(p.value.numel(), kParallelGrain, [=](std::int64_t begin, std::int64_t end) {
      T* __restrict w = w_all;
      T* __restrict g = g_all;
      T* __restrict v = v_all;
      if (!v) {  // momentum 0: no velocity is kept
        const rules::Sgd<T> rule{lr, decay};
        for (std::int64_t i = begin; i < end; ++i) rule.apply(w[i], g[i]);
      } else if (pydtnn) {
        const rules::PydtnnSgdMomentum<T> rule{lr, mu, decay, nesterov};
        for (std::int64_t i = begin; i < end; ++i) rule.apply(w[i], g[i], v[i]);
      } else {
        const rules::SgdMomentum<T> rule{lr, mu, decay, nesterov};
        for (std::int64_t i = begin; i < end; ++i) rule.apply(w[i], g[i], v[i]);
      }
    });
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new Sgd(p); }

}  // namespace

DTNN_PLUGIN("optimizer", "sgd",
            "SGD with momentum, Nesterov and weight decay (rule: textbook as PyTorch, or pydtnn)",
            dtnn::kSgdParameters,
            create)
