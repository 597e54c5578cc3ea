// cuda_conv2d: conv2d on the GPU through cuDNN (conv_layer.hpp).
#include "cuda_conv_layer.hpp"

namespace {

using namespace dtnn;

Plugin* create(const Params& p, const PluginContext&) { return new cuda::ConvLayer(p, false); }

}  // namespace

// cuDNN runs a following batchnorm on its own: only the relu is fused.
DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "conv2d", .device = "cuda",
                   .description = "conv2d on an NVIDIA GPU through cuDNN (NCHW)",
                   .parameters = dtnn::layer_parameters::kConv2dParameters,
                   .traits = R"({"fuses": [{"option": "conv_relu", "absorbs": ["relu"],
                                            "into": ["activation"]}]})",
                   .probe = ::dtnn::cuda::probe, .factory = create)
