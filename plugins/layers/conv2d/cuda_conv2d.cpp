// cuda_conv2d: conv2d on the GPU through cuDNN (conv_layer.hpp).
#include "cuda_conv_layer.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) { return new cuda::ConvLayer(p, false); }

}  // namespace

// cuDNN runs a following batchnorm on its own: only the relu is fused.
constexpr const char* kTraits = R"({"fuses": [{"option": "conv_relu", "absorbs": ["relu"],
                                               "into": ["activation"]}],
  "twin_checks": [
    {"params": {"filters": 4, "kernel": 3}, "input_nchw": [3, 8, 8]},
    {"params": {"filters": 5, "kernel": 3, "padding": 1, "stride": 2}, "input_nchw": [2, 9, 7]},
    {"params": {"filters": 6, "kernel": 1, "use_bias": false}, "input_nchw": [4, 5, 5]},
    {"params": {"filters": 3, "kernel": 3, "dilation": 2, "padding": 2}, "input_nchw": [2, 7, 7]},
    {"params": {"filters": 4, "kernel": 3, "activation": "relu"}, "input_nchw": [3, 6, 6]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "conv2d", .device = "cuda",
                   .description = "conv2d on an NVIDIA GPU through cuDNN (NCHW)",
                   .parameters = dtnn::layer_parameters::kConv2dParameters, .traits = kTraits,
                   .probe = ::dtnn::cuda::probe, .factory = create)
