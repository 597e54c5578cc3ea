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
#include <cmath>
#include <span>

#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/update_rules.hpp"

namespace {

using namespace dtnn;

// The rule over elements [begin, end) (the compiler vectorises this loop).
template <class Rule, class T>
void update_range(const Rule& r, T* __restrict w, T* __restrict g, T* __restrict m, T* __restrict v,
                  std::int64_t begin, std::int64_t end) {
  for (std::int64_t j = begin; j < end; ++j) r.apply(w[j], g[j], m[j], v[j]);
}

class Adam final : public Optimizer {
 public:
  explicit Adam(const Params& p) : s_(parse_adam_settings(p)) {}

  void build(std::span<const Parameter> params) override {
    m_ = zeros_like(params);
    v_ = zeros_like(params);
    step_ = Tensor::zeros(Shape{1}, DType::float64);
  }
  double learning_rate() const override { return s_.lr; }
  void set_learning_rate(double lr) override { s_.lr = lr; }
  std::vector<Tensor> state() override {
    std::vector<Tensor> s{step_};
    s.insert(s.end(), m_.begin(), m_.end());
    s.insert(s.end(), v_.begin(), v_.end());
    return s;
  }

  void begin_step() override {
    const double t = ++step_.data<double>()[0];
    c1_ = s_.correction1(t);
    c2_ = s_.correction2(t);
  }
  void update(std::size_t index, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) { apply<decltype(z)>(p, index); });
  }

 private:
  template <class T>
  void apply(const Parameter& p, std::size_t i) {
    T* w = p.value.data<T>();
    T* g = p.grad.data<T>();
    T *m = m_[i].data<T>(), *v = v_[i].data<T>();
    if (s_.rule == UpdateRule::pydtnn) {
      const rules::PydtnnAdam<T> rule{T(s_.beta1),       T(s_.beta2),    T(s_.epsilon),
                                   T(s_.lr * s_.decay), T(s_.lr / c1_), T(1.0 / c2_)};
      parallel_chunks(p.value.numel(), kParallelGrain, [=](std::int64_t begin, std::int64_t end) {
        update_range(rule, w, g, m, v, begin, end);
      });
      return;
    }
    const rules::Adam<T> rule{T(s_.beta1), T(s_.beta2),    T(s_.epsilon),
                           T(s_.decay), T(s_.lr / c1_), T(1.0 / std::sqrt(c2_))};
    parallel_chunks(p.value.numel(), kParallelGrain, [=](std::int64_t begin, std::int64_t end) {
      update_range(rule, w, g, m, v, begin, end);
    });
  }

  AdamSettings s_;
  double c1_ = 1, c2_ = 1;  // bias corrections of the current step: 1 - beta^t
  std::vector<Tensor> m_, v_;
  Tensor step_;  // float64 [1]: the step count t, kept as a tensor so checkpoints carry it
};

Plugin* create(const Params& p, const PluginContext&) { return new Adam(p); }

}  // namespace

DTNN_PLUGIN("optimizer", "adam",
            "Adam with bias correction and weight decay (rule: textbook as PyTorch, or pydtnn)",
            R"({"rule": "textbook", "learning_rate": null, "beta1": null, "beta2": 0.999,
                "epsilon": null, "decay": 0.0})",
            create)
