// cuda_conv2d: conv2d on the GPU through cuDNN (conv_layer.hpp).
#include "conv_layer.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) { return new cuda::ConvLayer(p, false); }

}  // namespace

DTNN_CUDA_PLUGIN("layer", "cuda_conv2d", "conv2d on an NVIDIA GPU through cuDNN (NCHW)",
                 dtnn::layer_settings::kConv2dParameters, create)
