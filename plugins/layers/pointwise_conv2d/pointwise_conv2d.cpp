// pointwise_conv2d: PyDTNN's PointwiseConv2D, a conv2d with a 1x1 window, stride 1, no padding.
// An alias (its traits): the model reads the layer as a conv2d with those parameters fixed and
// refuses them in the layer's entry; nothing of this plugin runs.
#include "dtnn/error.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  throw dtnn::Error("layer 'pointwise_conv2d' is an alias of conv2d: the model builds a conv2d");
}
}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "pointwise_conv2d",
                   .description =
                       "a conv2d with a 1x1 window, stride 1 and no padding "
                       "(PyDTNN's PointwiseConv2D)",
                   .traits = R"({"alias": {"type": "conv2d", "fixed": {"kernel": 1, "stride": 1,
                                                                      "padding": 0,
                                                                      "dilation": 1}},
                                "conformance": [{"params": {"filters": 3}, "input": [4, 3, 5]}]})",
                   .factory = create)
