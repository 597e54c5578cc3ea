// relu6: y = min(max(x, 0), 6) (MobileNetV2's); dy/dx = 1 for 0 < x < 6, else 0.
#include "dtnn/elementwise_layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
struct Relu6 {
  static constexpr const char* kType = "relu6";
  template <class T>
  static T forward(T x) {
    return x < T(0) ? T(0) : x > T(6) ? T(6) : x;
  }
  template <class T>
  static T gradient(T, T y) {  // 0 < y < 6 exactly where 0 < x < 6
    return y > T(0) && y < T(6) ? T(1) : T(0);
  }
  static constexpr bool kInPlace = true;
};
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) {
  return new dtnn::ElementwiseLayer<Relu6>();
}
}  // namespace

// Inputs over [-2, 8]: both kinks are crossed.
DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "relu6",
                   .description = "rectified linear unit capped at 6, y = min(max(x, 0), 6)",
                   .parameters = "{}",
                   .traits = R"({"conformance": [{"input": [4, 5, 3], "input_range": [-2, 8]}]})",
                   .factory = create)
