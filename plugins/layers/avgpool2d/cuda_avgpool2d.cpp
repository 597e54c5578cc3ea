// cuda_avgpool2d: 2-D average pooling on the GPU through cuDNN (stride 0 means stride = pool).
#include "cuda_pooling_layer.hpp"
#include "layer_parameters.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::cuda::PoolingLayer(p, "avgpool2d", CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING);
}
}  // namespace

DTNN_CUDA_PLUGIN("layer", "avgpool2d", "2-D average pooling on an NVIDIA GPU (cuDNN)",
                 dtnn::layer_parameters::kPool2dParameters, create)
