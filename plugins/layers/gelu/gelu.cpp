// gelu (Hendrycks and Gimpel 2016): y = x * Phi(x), Phi the standard normal's distribution.
//   approximate "none":  Phi(x) = (1 + erf(x / sqrt 2)) / 2,
//                        dy/dx = Phi(x) + x * exp(-x^2 / 2) / sqrt(2 pi);
//   approximate "tanh":  y = x (1 + tanh u) / 2,  u = sqrt(2 / pi) (x + 0.044715 x^3),
//                        dy/dx = (1 + tanh u) / 2 + x (1 - tanh^2 u) u' / 2,
//                        u' = sqrt(2 / pi) (1 + 3 * 0.044715 x^2).
// The same two forms as PyTorch's nn.GELU(approximate=...). The tanh form vectorises in float
// (dtnn/fast_math.hpp); erf is libm's, a call per value.
#include <cmath>

#include "dtnn/elementwise_layer.hpp"
#include "dtnn/fast_math.hpp"
#include "dtnn/plugin_api.hpp"
#include "gelu_parameters.hpp"

namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kInvSqrt2 = 0.7071067811865476;     // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.3989422804014327;   // 1 / sqrt(2 pi)
constexpr double kCubic = 0.044715;

// Two rules, not one with a switch: a loop holding erf's call in one branch does not vectorise
// the other.
struct GeluErf {
  static constexpr const char* kType = "gelu";
  template <class T>
  static T forward(T x) {
    return T(0.5) * x * (T(1) + std::erf(x * T(kInvSqrt2)));
  }
  template <class T>
  static T gradient(T x, T) {
    return T(0.5) * (T(1) + std::erf(x * T(kInvSqrt2))) +
           x * std::exp(T(-0.5) * x * x) * T(kInvSqrt2Pi);
  }
};

struct GeluTanh {
  static constexpr const char* kType = "gelu";
  template <class T>
  static T forward(T x) {
    return T(0.5) * x * (T(1) + tanh_of(x));
  }
  template <class T>
  static T gradient(T x, T) {
    const T t = tanh_of(x);
    return T(0.5) * (T(1) + t) +
           T(0.5) * x * (T(1) - t * t) * T(kSqrt2OverPi) * (T(1) + T(3 * kCubic) * x * x);
  }

 private:
  template <class T>
  static T tanh_of(T x) {
    return dtnn::fast::tanh(T(kSqrt2OverPi) * (x + T(kCubic) * x * x * x));
  }
};

dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  const std::string form = p.get_string("approximate");
  if (form != "none" && form != "tanh") p.fail("approximate", "\"none\" or \"tanh\"");
  if (form == "tanh") return new dtnn::ElementwiseLayer<GeluTanh>();
  return new dtnn::ElementwiseLayer<GeluErf>();
}

}  // namespace

constexpr const char* kTraits = R"({"conformance": [
    {"input": [4, 5, 3]},
    {"params": {"approximate": "tanh"}, "input": [6, 5]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "gelu",
                   .description = "Gaussian error linear unit, y = x Phi(x) (exact or tanh form)",
                   .parameters = dtnn::layer_parameters::kGeluParameters, .traits = kTraits,
                   .factory = create)
