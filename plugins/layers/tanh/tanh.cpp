// tanh: y = tanh(x); dy/dx = 1 - y^2.
#include <cmath>

#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
struct Tanh {
  static constexpr const char* kType = "tanh";
  template <class T>
  static T forward(T x) {
    return std::tanh(x);
  }
  template <class T>
  static T gradient(T, T y) {
    return T(1) - y * y;
  }
  static constexpr bool kInPlace = true;
};
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<Tanh>();
}
}  // namespace

DTNN_PLUGIN("layer", "tanh", "hyperbolic tangent, y = tanh(x)", "{}", create)
