// cuda_sgd: the CPU sgd (plugins/optimizers/sgd: momentum, Nesterov, weight decay, both rules)
// on the GPU: the same per-element rules (dtnn/update_rules.hpp) run in a kernel; the velocities
// live on the device and are checkpointed as the CPU plugin's are.
#include "cuda_plugin.hpp"
#include "dtnn/optimizer.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaSgd final : public Optimizer {
 public:
  explicit CudaSgd(const Params& p)
      : rule_(parse_update_rule(p)),
        lr_(p.get_double("learning_rate")),
        momentum_(number_or_rule_default(p, "momentum", rule_, 0.0, 0.9)),
        decay_(p.get_double("decay")),
        nesterov_(p.get_bool("nesterov")) {
    if (lr_ < 0) p.fail("learning_rate", "a number >= 0");
    if (momentum_ < 0 || momentum_ >= 1) p.fail("momentum", "a number in [0, 1)");
    if (decay_ < 0) p.fail("decay", "a number >= 0");
    if (nesterov_ && momentum_ == 0) p.fail("nesterov", "false when momentum is 0");
  }

  void build(std::span<const Parameter> params) override {
    velocity_ = momentum_ > 0 ? zeros_like(params) : std::vector<Tensor>(params.size());
  }
  double learning_rate() const override { return lr_; }
  void set_learning_rate(double lr) override { lr_ = lr; }
  std::vector<Tensor> state() override { return momentum_ > 0 ? velocity_ : std::vector<Tensor>{}; }

  void update(std::size_t index, const Parameter& p) override {
    const Tensor& v = velocity_[index];
    kernels::sgd_update(Context::get().stream(), p.value.raw(), p.grad.raw(),
                        v.defined() ? v.raw() : nullptr, std::size_t(p.value.numel()),
                        p.value.dtype(),
                        {lr_, momentum_, decay_, nesterov_, rule_ == UpdateRule::pydtnn});
  }

 private:
  UpdateRule rule_;
  double lr_, momentum_, decay_;
  bool nesterov_;
  std::vector<Tensor> velocity_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaSgd(p); }

}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "cuda_sgd",
                 "SGD with momentum, Nesterov and weight decay on an NVIDIA GPU (as sgd)",
                 R"({"rule": "textbook", "learning_rate": 0.01, "momentum": null, "nesterov": false,
                     "decay": 0.0})",
                 create)
