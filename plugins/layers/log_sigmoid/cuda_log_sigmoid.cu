// cuda_log_sigmoid: log_sigmoid's rule (log_sigmoid_rule.hpp, the CPU layer's own) in a kernel, a
// thread per value.
#include "cuda_elementwise_layer.cuh"
#include "log_sigmoid_rule.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::CudaElementwiseLayer<dtnn::rules::LogSigmoid>();
}
}  // namespace

constexpr const char* kTwinChecks =
    R"({"twin_checks": [{"input_nchw": [4, 5, 3], "input_range": [-30, 30]}]})";

DTNN_CUDA_LAYER("log_sigmoid",
                "logarithm of the logistic sigmoid on an NVIDIA GPU, y = -log(1 + exp(-x))", "{}",
                kTwinChecks, create)
