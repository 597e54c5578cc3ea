// cuda_tanh: hyperbolic tangent, y = tanh(x), on the GPU through cuDNN.
#include "cuda_activation_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::ActivationLayer("tanh", CUDNN_ACTIVATION_TANH);
}
}  // namespace

DTNN_CUDA_PLUGIN("layer", "tanh", "hyperbolic tangent, y = tanh(x), on an NVIDIA GPU (cuDNN)", "{}",
                 create)
