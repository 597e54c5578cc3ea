// cuda_identity: identity's rule (identity_rule.hpp, the CPU layer's own) in a kernel.
#include "cuda_elementwise_layer.cuh"
#include "identity_rule.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::CudaElementwiseLayer<dtnn::rules::Identity>();
}
}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [{"input_nchw": [2, 3, 4]}]})";

DTNN_CUDA_LAYER("identity", "y = x on an NVIDIA GPU", "{}", kTwinChecks, create)
