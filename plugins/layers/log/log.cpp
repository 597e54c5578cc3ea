// log: y = ln(x) for x > 0; dy/dx = 1 / x. (PyDTNN 1.x's Log computes log(sigmoid(x)) forward,
// which is log_sigmoid here, and 1 / (exp(dy) + 1) backward, which is no gradient.) For x <= 0
// the result is not finite, which the run's non-finite check reports.
#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"
#include "log_rule.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<dtnn::rules::Log>();
}
}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "log",
                   .description = "natural logarithm, y = ln(x), x > 0", .parameters = "{}",
                   .traits = R"({"conformance": [{"input": [4, 5, 3], "input_range": [0.2, 3]}]})",
                   .factory = create)
