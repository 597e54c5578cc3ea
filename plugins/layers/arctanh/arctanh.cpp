// arctanh: y = artanh(x) = log((1 + x) / (1 - x)) / 2 for |x| < 1; dy/dx = 1 / (1 - x^2).
// (PyDTNN 1.x's Arctanh computes arctan(x) forward and 1 / (1 + dy^2) backward: neither is the
// inverse hyperbolic tangent's, and the second is no gradient of anything.)
// Outside (-1, 1) the result is not finite, which the run's non-finite check reports.
#include "arctanh_rule.hpp"
#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<dtnn::rules::Arctanh>();
}
}  // namespace

DTNN_EXPORT_PLUGIN(
        .kind = "layer", .name = "arctanh",
        .description = "inverse hyperbolic tangent, y = artanh(x), |x| < 1", .parameters = "{}",
        .traits = R"({"conformance": [{"input": [4, 5, 3], "input_range": [-0.9, 0.9]}]})",
        .factory = create)
