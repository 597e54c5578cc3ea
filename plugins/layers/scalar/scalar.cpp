// scalar: y = scale * x, a fixed factor (PyDTNN 3.x's Scalar layer: attention's 1/sqrt(d_k) as a
// layer of its own); dy/dx = scale. No weights.
#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"
#include "scalar_rule.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<dtnn::rules::Scalar>(dtnn::rules::Scalar::of(p));
}
}  // namespace

constexpr const char* kTraits = R"({"conformance": [
    {"params": {"scale": -0.75}, "input": [3, 4, 2]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "scalar",
                   .description = "multiplies by a fixed factor, y = scale * x",
                   .parameters = dtnn::rules::Scalar::kParameters, .traits = kTraits,
                   .factory = create)
