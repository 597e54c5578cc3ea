// cuda_sigmoid: logistic sigmoid, y = 1 / (1 + exp(-x)), on the GPU through cuDNN.
#include "cuda_activation_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::ActivationLayer("sigmoid", CUDNN_ACTIVATION_SIGMOID);
}
}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [10]}]})";

DTNN_CUDA_LAYER("sigmoid", "logistic sigmoid, y = 1 / (1 + exp(-x)), on an NVIDIA GPU (cuDNN)",
                "{}", kTwinChecks, create)
