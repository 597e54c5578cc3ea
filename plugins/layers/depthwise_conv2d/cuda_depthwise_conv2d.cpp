// cuda_depthwise_conv2d: depthwise_conv2d on the GPU, a cuDNN convolution with one group per
// channel (conv_layer.hpp); weights [C, KH, KW] as the CPU plugin keeps them in NCHW.
#include "cuda_conv_layer.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) { return new cuda::ConvLayer(p, true); }

}  // namespace

DTNN_CUDA_PLUGIN("layer", "depthwise_conv2d",
                 "depthwise 2-D convolution on an NVIDIA GPU (cuDNN, one group per channel)",
                 dtnn::layer_parameters::kDepthwiseConv2dParameters, create)
