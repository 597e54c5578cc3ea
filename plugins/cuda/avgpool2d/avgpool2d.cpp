// cuda_avgpool2d: 2-D average pooling on the GPU through cuDNN (stride 0 means stride = pool).
#include "pooling_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::cuda::PoolingLayer(p, "avgpool2d", CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING);
}
}  // namespace

DTNN_CUDA_PLUGIN("layer", "cuda_avgpool2d", "2-D average pooling on an NVIDIA GPU (cuDNN)",
                 R"({"pool": [2, 2], "stride": [0, 0], "padding": [0, 0]})", create)
