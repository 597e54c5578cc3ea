// cuda_adam: adam (adam.hpp) with its rules run in a kernel on an NVIDIA GPU.
#include "adam.hpp"
#include "apply_rule.cuh"
#include "cuda_plugin.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::optimizers::Adam<dtnn::cuda::DeviceRules>(p);
}
}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "adam",
                 "Adam with bias correction and weight decay on an NVIDIA GPU (as adam)",
                 dtnn::optimizers::kAdamParameters, create)
