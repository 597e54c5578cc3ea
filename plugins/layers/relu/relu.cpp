// relu: y = max(x, 0); dy/dx = 1 where y > 0 (0 at and below zero).
#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
struct Relu {
  static constexpr const char* kType = "relu";
  template <class T>
  static T forward(T x) {
    return x > T(0) ? x : T(0);
  }
  template <class T>
  static T gradient(T, T y) {
    return y > T(0) ? T(1) : T(0);
  }
  static constexpr bool kInPlace = true;
};
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<Relu>();
}
}  // namespace

DTNN_PLUGIN("layer", "relu", "rectified linear unit, y = max(x, 0)", "{}", create)
