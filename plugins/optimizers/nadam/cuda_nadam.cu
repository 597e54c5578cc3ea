// cuda_nadam: nadam (nadam.hpp) with its rules run in a kernel on an NVIDIA GPU.
#include "apply_rule.cuh"
#include "cuda_plugin.hpp"
#include "nadam.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::optimizers::Nadam<dtnn::cuda::DeviceRules>(p);
}
}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "nadam", "Adam with Nesterov momentum on an NVIDIA GPU (as nadam)",
                 dtnn::optimizers::kNadamParameters, create)
