// adam: Kingma & Ba, as PyTorch implements it (t: step count from 1, g: gradient):
//   g = g + decay * w;  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   w -= lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + epsilon);   g = 0 (consumed)
#include <cmath>
#include <span>

#include "dtnn/optimizer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class Adam final : public Optimizer {
 public:
  explicit Adam(const Params& p)
      : lr_(p.get_double("learning_rate")),
        beta1_(p.get_double("beta1")),
        beta2_(p.get_double("beta2")),
        epsilon_(p.get_double("epsilon")),
        decay_(p.get_double("decay")) {
    if (lr_ < 0) p.fail("learning_rate", "a number >= 0");
    if (beta1_ < 0 || beta1_ >= 1) p.fail("beta1", "a number in [0, 1)");
    if (beta2_ < 0 || beta2_ >= 1) p.fail("beta2", "a number in [0, 1)");
    if (epsilon_ <= 0) p.fail("epsilon", "a number > 0");
    if (decay_ < 0) p.fail("decay", "a number >= 0");
  }

  void build(std::span<const Parameter> params) override {
    m_.clear();
    v_.clear();
    for (const auto& p : params) {
      m_.push_back(Tensor::zeros(p.value.shape(), p.value.dtype()));
      v_.push_back(Tensor::zeros(p.value.shape(), p.value.dtype()));
    }
    step_ = Tensor::zeros(Shape{1}, DType::float64);
  }
  double learning_rate() const override { return lr_; }
  void set_learning_rate(double lr) override { lr_ = lr; }
  std::vector<Tensor> state() override {
    std::vector<Tensor> s{step_};
    s.insert(s.end(), m_.begin(), m_.end());
    s.insert(s.end(), v_.begin(), v_.end());
    return s;
  }

  void step(std::span<const Parameter> params) override {
    const double t = ++step_.data<double>()[0];
    const double c1 = 1.0 - std::pow(beta1_, t), c2 = 1.0 - std::pow(beta2_, t);
    for (std::size_t i = 0; i < params.size(); ++i)
      dispatch_dtype(params[i].value.dtype(),
                     [&](auto z) { update<decltype(z)>(params[i], i, c1, c2); });
  }

 private:
  template <class T>
  void update(const Parameter& p, std::size_t i, double c1, double c2) {
    T* w_all = p.value.data<T>();
    T* g_all = p.grad.data<T>();
    T *m_all = m_[i].data<T>(), *v_all = v_[i].data<T>();
    const T b1 = T(beta1_), b2 = T(beta2_), eps = T(epsilon_), decay = T(decay_);
    const T step = T(lr_ / c1), inv_sqrt_c2 = T(1.0 / std::sqrt(c2));
    parallel_chunks(p.value.numel(), kParallelGrain, [=](std::int64_t begin, std::int64_t end) {
      T* __restrict w = w_all;
      T* __restrict g = g_all;
      T* __restrict m = m_all;
      T* __restrict v = v_all;
      for (std::int64_t j = begin; j < end; ++j) {
        const T gj = g[j] + decay * w[j];
        m[j] = b1 * m[j] + (T(1) - b1) * gj;
        v[j] = b2 * v[j] + (T(1) - b2) * gj * gj;
        w[j] -= step * m[j] / (std::sqrt(v[j]) * inv_sqrt_c2 + eps);
        g[j] = T(0);
      }
    });
  }

  double lr_, beta1_, beta2_, epsilon_, decay_;
  std::vector<Tensor> m_, v_;
  Tensor step_;  // float64 [1]: the step count t, kept as a tensor so checkpoints carry it
};

Plugin* create(const Params& p, const PluginContext&) { return new Adam(p); }

}  // namespace

DTNN_PLUGIN(
    "optimizer", "adam", "Adam with bias correction and weight decay (PyTorch's rule)",
    R"({"learning_rate": 0.001, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, "decay": 0.0})",
    create)
