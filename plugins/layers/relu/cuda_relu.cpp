// cuda_relu: rectified linear unit, y = max(x, 0), on the GPU through cuDNN.
#include "cuda_activation_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::ActivationLayer("relu", CUDNN_ACTIVATION_RELU);
}
}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [3, 4, 4]}]})";

DTNN_CUDA_LAYER("relu", "rectified linear unit, y = max(x, 0), on an NVIDIA GPU (cuDNN)", "{}",
                kTwinChecks, create)
