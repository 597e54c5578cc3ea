// log_sigmoid: y = log(1 / (1 + exp(-x))) = min(x, 0) - log(1 + exp(-|x|)), the form that neither
// overflows nor loses precision for large |x|; dy/dx = 1 - sigmoid(x) = 1 - exp(y).
#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"
#include "log_sigmoid_rule.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<dtnn::rules::LogSigmoid>();
}
}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "log_sigmoid",
                   .description = "logarithm of the logistic sigmoid, y = -log(1 + exp(-x))",
                   .parameters = "{}",
                   .traits = R"({"conformance": [{"input": [4, 5, 3], "input_range": [-30, 30]}]})",
                   .factory = create)
