// cuda_relu: rectified linear unit, y = max(x, 0), on the GPU through cuDNN.
#include "cuda_activation_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::ActivationLayer("relu", CUDNN_ACTIVATION_RELU);
}
}  // namespace

DTNN_CUDA_PLUGIN("layer", "relu", "rectified linear unit, y = max(x, 0), on an NVIDIA GPU (cuDNN)",
                 "{}", create)
