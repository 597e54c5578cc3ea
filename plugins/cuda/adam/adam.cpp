// cuda_adam: the CPU adam (plugins/optimizers/adam, both rules) on the GPU: the same per-element
// rules (dtnn/update_rules.hpp) in a kernel. The moments live on the device; the step count is a
// host float64 [1] tensor, so checkpoints hold what the CPU plugin's hold.
#include <cmath>

#include "cuda_plugin.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaAdam final : public Optimizer {
 public:
  explicit CudaAdam(const Params& p) : s_(parse_adam_settings(p)) {}

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
  void update(std::size_t i, const Parameter& p) override {
    kernels::adam_update(Context::get().stream(), p.value.raw(), p.grad.raw(), m_[i].raw(),
                         v_[i].raw(), std::size_t(p.value.numel()), p.value.dtype(),
                         {s_.beta1, s_.beta2, s_.epsilon, s_.decay, s_.lr, c1_, c2_,
                          s_.rule == UpdateRule::pydtnn});
  }

 private:
  AdamSettings s_;
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
