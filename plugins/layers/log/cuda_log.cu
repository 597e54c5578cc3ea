// cuda_log: log's rule (log_rule.hpp, the CPU layer's own) in a kernel, a thread per value.
#include "cuda_elementwise_layer.cuh"
#include "log_rule.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::cuda::CudaElementwiseLayer<dtnn::rules::Log>();
}
}  // namespace

constexpr const char* kTwinChecks =
    R"({"twin_checks": [{"input_nchw": [4, 5, 3], "input_range": [0.2, 3]}]})";

DTNN_CUDA_LAYER("log", "natural logarithm on an NVIDIA GPU, y = ln(x), x > 0", "{}", kTwinChecks,
                create)
