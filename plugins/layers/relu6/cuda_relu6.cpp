// cuda_relu6: y = min(max(x, 0), 6) on the GPU, cuDNN's clipped relu with its ceiling at 6.
#include "cuda_activation_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::ActivationLayer("relu6", CUDNN_ACTIVATION_CLIPPED_RELU, 6.0);
}
}  // namespace

// Inputs over [-2, 8]: both kinks are crossed.
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [3, 4, 5], "input_range": [-2, 8]}]})";

DTNN_CUDA_LAYER("relu6", "rectified linear unit capped at 6 on an NVIDIA GPU (cuDNN)", "{}",
                kTwinChecks, create)
