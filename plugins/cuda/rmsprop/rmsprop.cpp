// cuda_rmsprop: the CPU rmsprop (plugins/optimizers/rmsprop, both rules) on the GPU: the same
// per-element rules (dtnn/update_rules.hpp) in a kernel; the mean squares live on the device and
// are checkpointed as the CPU plugin's are.
#include "cuda_plugin.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaRmsProp final : public RmsPropBase {
 public:
  using RmsPropBase::RmsPropBase;

  void update(std::size_t i, const Parameter& p) override {
    kernels::rmsprop_update(Context::get().stream(), p.value.raw(), p.grad.raw(),
                            square_[i].raw(), std::size_t(p.value.numel()), p.value.dtype(),
                            {s_.lr, s_.rho, s_.epsilon, s_.decay, s_.rule == UpdateRule::pydtnn});
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaRmsProp(p); }

}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "cuda_rmsprop", "RMSProp on an NVIDIA GPU (as rmsprop)",
                 dtnn::kRmsPropParameters, create)
