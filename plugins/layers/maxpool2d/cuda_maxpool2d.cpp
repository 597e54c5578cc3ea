// cuda_maxpool2d: 2-D max pooling on the GPU through cuDNN (stride 0 means stride = pool).
#include "cuda_pooling_layer.hpp"
#include "pool2d_parameters.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::cuda::PoolingLayer(p, "maxpool2d", CUDNN_POOLING_MAX);
}
}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"pool": 2}, "input_nchw": [3, 6, 6]},
    {"params": {"pool": 3, "stride": 2, "padding": 1}, "input_nchw": [2, 7, 7]}]})";

DTNN_CUDA_LAYER("maxpool2d", "2-D max pooling on an NVIDIA GPU (cuDNN)",
                dtnn::layer_parameters::kPool2dParameters, kTwinChecks, create)
