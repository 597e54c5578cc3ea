// identity: y = x; dy/dx = 1 (PyDTNN's Identity, a placeholder in a model file).
#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"
#include "identity_rule.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<dtnn::rules::Identity>();
}
}  // namespace

DTNN_PLUGIN("layer", "identity", "y = x", "{}", create)
