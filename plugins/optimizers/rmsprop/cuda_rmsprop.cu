// cuda_rmsprop: rmsprop (rmsprop.hpp) with its rules run in a kernel on an NVIDIA GPU.
#include "apply_rule.cuh"
#include "cuda_plugin.hpp"
#include "rmsprop.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::optimizers::RmsProp<dtnn::cuda::DeviceRules>(p);
}
}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "rmsprop", "RMSProp on an NVIDIA GPU (as rmsprop)",
                 dtnn::optimizers::kRmsPropParameters, create)
