// cuda_tanh: hyperbolic tangent, y = tanh(x), on the GPU through cuDNN.
#include "cuda_activation_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::ActivationLayer("tanh", CUDNN_ACTIVATION_TANH);
}
}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [2, 3, 3]}]})";

DTNN_CUDA_LAYER("tanh", "hyperbolic tangent, y = tanh(x), on an NVIDIA GPU (cuDNN)", "{}",
                kTwinChecks, create)
