// cuda_avgpool2d: 2-D average pooling on the GPU through cuDNN (stride 0 means stride = pool).
#include "cuda_pooling_layer.hpp"
#include "pool2d_parameters.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::cuda::PoolingLayer(p, "avgpool2d", CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING);
}
}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"pool": 2}, "input_nchw": [3, 6, 6]},
    {"params": {"pool": 3, "stride": 1, "padding": 1}, "input_nchw": [2, 5, 5]}]})";

DTNN_CUDA_LAYER("avgpool2d", "2-D average pooling on an NVIDIA GPU (cuDNN)",
                dtnn::layer_parameters::kPool2dParameters, kTwinChecks, create)
