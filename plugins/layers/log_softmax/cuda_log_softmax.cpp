// cuda_log_softmax: the logarithm of the softmax over the last axis on the GPU, through cuDNN's
// log mode (the maximum subtracted first); backward dx = dy - softmax(x) sum dy, as the CPU
// layer. A sample of one axis is one row; a sequence's [T, classes] is T rows.
#include "cuda_softmax_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  using dtnn::cuda::SoftmaxLayer;
  return new SoftmaxLayer("log_softmax", CUDNN_SOFTMAX_LOG, SoftmaxLayer::Over::last_axis);
}
}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [7]},
    {"input_nchw": [4, 5], "input_range": [-6, 6]}]})";

DTNN_CUDA_LAYER("log_softmax",
                "logarithm of the softmax over the last axis on an NVIDIA GPU "
                "(cuDNN)",
                "{}", kTwinChecks, create)
