// lion's twin on an NVIDIA GPU: the same optimizer class, its rule run in a kernel.
#include "apply_rule.cuh"
#include "cuda_plugin.hpp"
#include "lion.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new example::Lion<dtnn::cuda::DeviceRules>(p);
}
}  // namespace

DTNN_CUDA_PLUGIN("optimizer", "lion", "example out-of-tree optimizer Lion on an NVIDIA GPU",
                 example::kParameters, create)
