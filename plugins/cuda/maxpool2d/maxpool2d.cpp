// cuda_maxpool2d: 2-D max pooling on the GPU through cuDNN (stride 0 means stride = pool).
#include "pooling_layer.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::cuda::PoolingLayer(p, "maxpool2d", CUDNN_POOLING_MAX);
}
}  // namespace

DTNN_CUDA_PLUGIN("layer", "cuda_maxpool2d", "2-D max pooling on an NVIDIA GPU (cuDNN)",
                 R"({"pool": [2, 2], "stride": [0, 0], "padding": [0, 0]})", create)
