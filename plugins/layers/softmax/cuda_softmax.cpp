// cuda_softmax: softmax over each sample on the GPU through cuDNN (accurate mode: the maximum is
// subtracted first). Before categorical cross-entropy the model skips its backward and the loss
// gives the gradient of the logits directly.
#include "cuda_softmax_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  using dtnn::cuda::SoftmaxLayer;
  return new SoftmaxLayer("softmax", CUDNN_SOFTMAX_ACCURATE, SoftmaxLayer::Over::sample);
}
}  // namespace

// A softmax over each sample (dtnn/plugin_traits.hpp), like its CPU twin.
constexpr const char* kTwinChecks = R"({"softmax": true, "twin_checks": [
    {"input_nchw": [10]}]})";

DTNN_CUDA_LAYER("softmax", "softmax over each sample on an NVIDIA GPU (cuDNN)", "{}", kTwinChecks,
                create)
