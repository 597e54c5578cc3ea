// cuda_scalar: scalar's rule (scalar_rule.hpp, the CPU layer's own) in a kernel, a thread per
// value.
#include "cuda_elementwise_layer.cuh"
#include "scalar_rule.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::cuda::CudaElementwiseLayer<dtnn::rules::Scalar>(dtnn::rules::Scalar::of(p));
}
}  // namespace

constexpr const char* kTwinChecks =
    R"({"twin_checks": [{"params": {"scale": -0.75}, "input_nchw": [3, 4, 2]}]})";

DTNN_CUDA_LAYER("scalar", "multiplies by a fixed factor on an NVIDIA GPU, y = scale * x",
                dtnn::rules::Scalar::kParameters, kTwinChecks, create)
