// identity: y = x; dy/dx = 1 (PyDTNN's Identity, a placeholder in a model file).
#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
struct Identity {
  static constexpr const char* kType = "identity";
  template <class T>
  static T forward(T x) {
    return x;
  }
  template <class T>
  static T gradient(T, T) {
    return T(1);
  }
};
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<Identity>();
}
}  // namespace

DTNN_PLUGIN("layer", "identity", "y = x", "{}", create)
