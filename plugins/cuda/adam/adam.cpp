// cuda_adam: the CPU adam (plugins/optimizers/adam, both rules) on the GPU: the same per-element
// rules (dtnn/update_rules.hpp) in a kernel. The moments live on the device; the step count is a
// host float64 [1] tensor, so checkpoints hold what the CPU plugin's hold.

#include "cuda_plugin.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaAdam final : public AdamBase {
 public:
  using AdamBase::AdamBase;

  void update(std::size_t i, const Parameter& p) override {
    kernels::adam_update(Context::get().stream(), p.value.raw(), p.grad.raw(), m_[i].raw(),
                         v_[i].raw(), std::size_t(p.value.numel()), p.value.dtype(),
                         {s_.beta1, s_.beta2, s_.epsilon, s_.decay, s_.lr, c1_, c2_,
                          s_.rule == UpdateRule::pydtnn});
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaAdam(p); }

}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "cuda_adam",
                 "Adam with bias correction and weight decay on an NVIDIA GPU (as adam)",
                 dtnn::kAdamParameters,
                 create)
