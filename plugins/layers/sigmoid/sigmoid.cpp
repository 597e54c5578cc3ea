// sigmoid: y = 1 / (1 + exp(-x)); dy/dx = y * (1 - y).
#include <cmath>

#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
struct Sigmoid {
  static constexpr const char* kType = "sigmoid";
  template <class T>
  static T forward(T x) {
    // Two branches keep exp's argument <= 0: no overflow for large |x|.
    if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
    T e = std::exp(x);
    return e / (T(1) + e);
  }
  template <class T>
  static T gradient(T, T y) {
    return y * (T(1) - y);
  }
  static constexpr bool kInPlace = true;
};
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<Sigmoid>();
}
}  // namespace

DTNN_PLUGIN("layer", "sigmoid", "logistic sigmoid, y = 1 / (1 + exp(-x))", "{}", create)
