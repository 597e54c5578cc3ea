// cuda_adam: the CPU adam (plugins/optimizers/adam, both rules) on the GPU: the same per-element
// rules (dtnn/update_rules.hpp) in a kernel. The moments live on the device; the step count is a
// host float64 [1] tensor, so checkpoints hold what the CPU plugin's hold.
#include <cmath>

#include "cuda_plugin.hpp"
#include "dtnn/optimizer.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaAdam final : public Optimizer {
 public:
  explicit CudaAdam(const Params& p)
      : rule_(parse_update_rule(p)),
        lr_(number_or_rule_default(p, "learning_rate", rule_, 0.001, 0.01)),
        beta1_(number_or_rule_default(p, "beta1", rule_, 0.9, 0.99)),
        beta2_(p.get_double("beta2")),
        epsilon_(number_or_rule_default(p, "epsilon", rule_, 1e-8, 1e-7)),
        decay_(p.get_double("decay")) {
    if (lr_ < 0) p.fail("learning_rate", "a number >= 0");
    if (beta1_ < 0 || beta1_ >= 1) p.fail("beta1", "a number in [0, 1)");
    if (beta2_ < 0 || beta2_ >= 1) p.fail("beta2", "a number in [0, 1)");
    if (epsilon_ <= 0) p.fail("epsilon", "a number > 0");
    if (decay_ < 0) p.fail("decay", "a number >= 0");
  }

  void build(std::span<const Parameter> params) override {
    m_ = zeros_like(params);
    v_ = zeros_like(params);
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
  void begin_step() override {
    const double t = ++step_.data<double>()[0];
    c1_ = 1.0 - std::pow(beta1_, t);
    c2_ = 1.0 - std::pow(beta2_, t);
  }
  void update(std::size_t i, const Parameter& p) override {
    kernels::adam_update(Context::get().stream(), p.value.raw(), p.grad.raw(), m_[i].raw(),
                         v_[i].raw(), std::size_t(p.value.numel()), p.value.dtype(),
                         {beta1_, beta2_, epsilon_, decay_, lr_, c1_, c2_,
                          rule_ == UpdateRule::pydtnn});
  }

 private:
  UpdateRule rule_;
  double lr_, beta1_, beta2_, epsilon_, decay_;
  double c1_ = 1, c2_ = 1;
  std::vector<Tensor> m_, v_;
  Tensor step_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaAdam(p); }

}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "cuda_adam",
                 "Adam with bias correction and weight decay on an NVIDIA GPU (as adam)",
                 R"({"rule": "textbook", "learning_rate": null, "beta1": null, "beta2": 0.999,
                     "epsilon": null, "decay": 0.0})",
                 create)
