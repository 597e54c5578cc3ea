// cuda_conv2d: conv2d on the GPU through cuDNN (conv_layer.hpp).
#include "conv_layer.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) { return new cuda::ConvLayer(p, false); }

}  // namespace

DTNN_CUDA_PLUGIN(
    "layer", "cuda_conv2d", "conv2d on an NVIDIA GPU through cuDNN (NCHW)",
    R"({"filters": 0, "kernel": [3, 3], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
        "use_bias": true, "activation": "", "batchnorm": null,
        "weights_initializer": "glorot_uniform", "biases_initializer": "zeros", "algorithm": ""})",
    create)
