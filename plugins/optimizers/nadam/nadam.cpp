// nadam: Adam with Nesterov momentum (Dozat) (t: step from 1, g: gradient, consumed afterwards).
//   rule "textbook" (PyTorch's NAdam; lr 0.002, beta1 0.9, epsilon 1e-8, momentum_decay 0.004):
//     g = g + decay * w;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//     mu_t = b1 (1 - 0.5 * 0.96^(t * momentum_decay));  P_t = mu_1 ... mu_t
//     d = sqrt(v / (1 - b2^t)) + epsilon
//     w -= lr (1 - mu_t) / (1 - P_t) g / d + lr mu_{t+1} / (1 - P_t mu_{t+1}) m / d
//   rule "pydtnn" (lr 0.01, beta1 0.99, epsilon 1e-7; momentum_decay unused):
//     m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//     w -= lr * (decay * w + ((m + (1 - b1) g) / (1 - b1^t)) / sqrt(v / (1 - b2^t) + epsilon))
#include <cmath>
#include <span>

#include "dtnn/optimizer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class Nadam final : public Optimizer {
 public:
  explicit Nadam(const Params& p)
      : rule_(parse_update_rule(p)),
        lr_(number_or_rule_default(p, "learning_rate", rule_, 0.002, 0.01)),
        beta1_(number_or_rule_default(p, "beta1", rule_, 0.9, 0.99)),
        beta2_(p.get_double("beta2")),
        epsilon_(number_or_rule_default(p, "epsilon", rule_, 1e-8, 1e-7)),
        decay_(p.get_double("decay")),
        momentum_decay_(p.get_double("momentum_decay")) {
    if (lr_ < 0) p.fail("learning_rate", "a number >= 0");
    if (beta1_ < 0 || beta1_ >= 1) p.fail("beta1", "a number in [0, 1)");
    if (beta2_ < 0 || beta2_ >= 1) p.fail("beta2", "a number in [0, 1)");
    if (epsilon_ <= 0) p.fail("epsilon", "a number > 0");
    if (decay_ < 0) p.fail("decay", "a number >= 0");
    if (momentum_decay_ < 0) p.fail("momentum_decay", "a number >= 0");
  }

  void build(std::span<const Parameter> params) override {
    m_ = zeros_like(params);
    v_ = zeros_like(params);
    counters_ = Tensor::zeros(Shape{2}, DType::float64);  // t, and P_t (1 before any step)
    counters_.data<double>()[1] = 1.0;
  }
  double learning_rate() const override { return lr_; }
  void set_learning_rate(double lr) override { lr_ = lr; }
  std::vector<Tensor> state() override {
    std::vector<Tensor> s{counters_};
    s.insert(s.end(), m_.begin(), m_.end());
    s.insert(s.end(), v_.begin(), v_.end());
    return s;
  }

  void begin_step() override {
    double* c = counters_.data<double>();
    const double t = ++c[0];
    c2_ = 1.0 - std::pow(beta2_, t);
    if (rule_ == UpdateRule::pydtnn) {
      c1_ = 1.0 - std::pow(beta1_, t);
      return;
    }
    const double mu = beta1_ * (1.0 - 0.5 * std::pow(0.96, t * momentum_decay_));
    mu_next_ = beta1_ * (1.0 - 0.5 * std::pow(0.96, (t + 1) * momentum_decay_));
    c[1] *= mu;
    grad_coef_ = lr_ * (1.0 - mu) / (1.0 - c[1]);
    moment_coef_ = lr_ * mu_next_ / (1.0 - c[1] * mu_next_);
  }

  void update(std::size_t index, const Parameter& p) override {
    dispatch_dtype(p.value.dtype(), [&](auto z) { apply<decltype(z)>(p, index); });
  }

 private:
  template <class T>
  void apply(const Parameter& p, std::size_t i) const {
    T* w_all = p.value.data<T>();
    T* g_all = p.grad.data<T>();
    T* m_all = m_[i].data<T>();
    T* v_all = v_[i].data<T>();
    const T b1 = T(beta1_), b2 = T(beta2_), eps = T(epsilon_), decay = T(decay_);
    const T inv_c2 = T(1.0 / c2_);
    const bool pydtnn = rule_ == UpdateRule::pydtnn;
    const T lr = T(lr_), inv_c1 = T(1.0 / c1_);
    const T grad_coef = T(grad_coef_), moment_coef = T(moment_coef_);
    parallel_chunks(p.value.numel(), kParallelGrain, [=](std::int64_t begin, std::int64_t end) {
      T* __restrict w = w_all;
      T* __restrict g = g_all;
      T* __restrict m = m_all;
      T* __restrict v = v_all;
      if (pydtnn) {
        for (std::int64_t j = begin; j < end; ++j) {
          m[j] = b1 * m[j] + (T(1) - b1) * g[j];
          v[j] = b2 * v[j] + (T(1) - b2) * g[j] * g[j];
          const T mt = (m[j] + (T(1) - b1) * g[j]) * inv_c1;
          w[j] -= lr * (decay * w[j] + mt / std::sqrt(v[j] * inv_c2 + eps));
          g[j] = T(0);
        }
        return;
      }
      for (std::int64_t j = begin; j < end; ++j) {
        const T gj = g[j] + decay * w[j];
        m[j] = b1 * m[j] + (T(1) - b1) * gj;
        v[j] = b2 * v[j] + (T(1) - b2) * gj * gj;
        const T d = std::sqrt(v[j] * inv_c2) + eps;
        w[j] -= (grad_coef * gj + moment_coef * m[j]) / d;
        g[j] = T(0);
      }
    });
  }

  UpdateRule rule_;
  double lr_, beta1_, beta2_, epsilon_, decay_, momentum_decay_;
  double c1_ = 1, c2_ = 1, mu_next_ = 0, grad_coef_ = 0, moment_coef_ = 0;  // of the current step
  std::vector<Tensor> m_, v_;
  Tensor counters_;  // float64 [2]: step count t and the momentum product P_t, for checkpoints
};

Plugin* create(const Params& p, const PluginContext&) { return new Nadam(p); }

}  // namespace

DTNN_PLUGIN("optimizer", "nadam",
            "Adam with Nesterov momentum (rule: textbook as PyTorch, or pydtnn)",
            R"({"rule": "textbook", "learning_rate": null, "beta1": null, "beta2": 0.999,
                "epsilon": null, "decay": 0.0, "momentum_decay": 0.004})",
            create)
