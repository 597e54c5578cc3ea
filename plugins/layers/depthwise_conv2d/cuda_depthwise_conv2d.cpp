// cuda_depthwise_conv2d: depthwise_conv2d on the GPU, a cuDNN convolution with one group per
// channel (conv_layer.hpp); weights [C, KH, KW] as the CPU plugin keeps them in NCHW.
#include "cuda_conv_layer.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) { return new cuda::ConvLayer(p, true); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"kernel": 3, "padding": 1}, "input_nchw": [4, 6, 6]},
    {"params": {"kernel": 3, "stride": 2, "use_bias": false}, "input_nchw": [3, 7, 7]}]})";

DTNN_CUDA_LAYER("depthwise_conv2d",
                "depthwise 2-D convolution on an NVIDIA GPU (cuDNN, one group per channel)",
                dtnn::layer_parameters::kDepthwiseConv2dParameters, kTwinChecks, create)
