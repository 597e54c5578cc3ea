// cuda_sgd: the CPU sgd (plugins/optimizers/sgd: momentum, Nesterov, weight decay, both rules)
// on the GPU: the same per-element rules (dtnn/update_rules.hpp) run in a kernel; the velocities
// live on the device and are checkpointed as the CPU plugin's are.
#include "cuda_plugin.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaSgd final : public SgdBase {
 public:
  using SgdBase::SgdBase;

  void update(std::size_t index, const Parameter& p) override {
    const Tensor& v = velocity_[index];
    kernels::sgd_update(Context::get().stream(), p.value.raw(), p.grad.raw(),
                        v.defined() ? v.raw() : nullptr, std::size_t(p.value.numel()),
                        p.value.dtype(),
                        {s_.lr, s_.momentum, s_.decay, s_.nesterov, s_.rule == UpdateRule::pydtnn});
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaSgd(p); }

}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "cuda_sgd",
                 "SGD with momentum, Nesterov and weight decay on an NVIDIA GPU (as sgd)",
                 dtnn::kSgdParameters,
                 create)
