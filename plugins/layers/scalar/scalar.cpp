// scalar: y = scale * x, a fixed factor (PyDTNN 3.x's Scalar layer: attention's 1/sqrt(d_k) as a
// layer of its own); dy/dx = scale. No weights.
#include <cmath>

#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
struct Scalar {
  static constexpr const char* kType = "scalar";
  double scale = 1;
  template <class T>
  T forward(T x) const {
    return static_cast<T>(scale) * x;
  }
  template <class T>
  T gradient(T, T) const {
    return static_cast<T>(scale);
  }
};
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  Scalar op;
  op.scale = p.get_double("scale");
  if (!std::isfinite(op.scale)) p.fail("scale", "a finite number");
  return new dtnn::ElementwiseLayer<Scalar>(op);
}
}  // namespace

constexpr const char* kTraits = R"({"conformance": [
    {"params": {"scale": -0.75}, "input": [3, 4, 2]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "scalar",
                   .description = "multiplies by a fixed factor, y = scale * x",
                   .parameters = R"({"scale": 1.0})", .traits = kTraits, .factory = create)
