// cuda_arctanh: arctanh's rule (arctanh_rule.hpp, the CPU layer's own) in a kernel, a thread per
// value.
#include "arctanh_rule.hpp"
#include "cuda_elementwise_layer.cuh"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::CudaElementwiseLayer<dtnn::rules::Arctanh>();
}
}  // namespace

constexpr const char* kTwinChecks =
    R"({"twin_checks": [{"input_nchw": [4, 5, 3], "input_range": [-0.9, 0.9]}]})";

DTNN_CUDA_LAYER("arctanh", "inverse hyperbolic tangent on an NVIDIA GPU, y = artanh(x), |x| < 1",
                "{}", kTwinChecks, create)
