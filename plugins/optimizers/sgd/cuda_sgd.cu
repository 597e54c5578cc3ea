// cuda_sgd: sgd (sgd.hpp) with its rules run in a kernel on an NVIDIA GPU.
#include "apply_rule.cuh"
#include "cuda_plugin.hpp"
#include "sgd.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::optimizers::Sgd<dtnn::cuda::DeviceRules>(p);
}
}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "sgd",
                 "SGD with momentum, Nesterov and weight decay on an NVIDIA GPU (as sgd)",
                 dtnn::optimizers::kSgdParameters, create)
