// leaky_relu: y = x for x > 0, negative_slope * x otherwise (PyDTNN's LeakyRelu, slope 0.01 by
// default); dy/dx = 1 or negative_slope.
#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"
#include "leaky_relu_parameters.hpp"

namespace {
struct LeakyRelu {
  static constexpr const char* kType = "leaky_relu";
  double slope = 0.01;
  template <class T>
  T forward(T x) const {
    return x > T(0) ? x : static_cast<T>(slope) * x;
  }
  template <class T>
  T gradient(T x, T) const {
    return x > T(0) ? T(1) : static_cast<T>(slope);
  }
};
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  LeakyRelu op;
  op.slope = p.get_double("negative_slope");
  if (!(op.slope >= 0.0 && op.slope < 1.0)) p.fail("negative_slope", "a number in [0, 1)");
  return new dtnn::ElementwiseLayer<LeakyRelu>(op);
}
}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"negative_slope": 0.2}, "input": [3, 4, 2]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "leaky_relu",
                   .description = "leaky rectified linear unit, y = x > 0 ? x : slope * x",
                   .parameters = dtnn::layer_parameters::kLeakyReluParameters, .traits = kTraits,
                   .factory = create)
