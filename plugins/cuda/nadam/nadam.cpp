// cuda_nadam: the CPU nadam (plugins/optimizers/nadam, both rules) on the GPU: the same
// per-element rules (dtnn/update_rules.hpp) in a kernel, with the step's coefficients computed
// on the host by NadamBase; the moments live on the device, the counters on the host, so
// checkpoints hold what the CPU plugin's hold.
#include "cuda_plugin.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/optimizer_settings.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaNadam final : public NadamBase {
 public:
  using NadamBase::NadamBase;

  void update(std::size_t i, const Parameter& p) override {
    kernels::nadam_update(Context::get().stream(), p.value.raw(), p.grad.raw(), m_[i].raw(),
                          v_[i].raw(), std::size_t(p.value.numel()), p.value.dtype(),
                          {s_.beta1, s_.beta2, s_.epsilon, s_.decay, s_.lr, inv_c1_, inv_c2_,
                           grad_coef_, moment_coef_, s_.rule == UpdateRule::pydtnn});
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaNadam(p); }

}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "cuda_nadam",
                 "Adam with Nesterov momentum on an NVIDIA GPU (as nadam)",
                 dtnn::kNadamParameters, create)
