// softmax over each sample's values: y_i = exp(x_i - max x) / sum_j exp(x_j - max x).
// Backward (used when the loss does not combine with softmax): dx_i = y_i (dy_i - sum_j dy_j y_j).
#include <algorithm>
#include <cmath>

#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class Softmax final : public Layer {
 public:
  std::string type() const override { return "softmax"; }
  void build(const LayerBuildContext& ctx) override { shape_ = ctx.input_shape; }
  Shape output_shape() const override { return shape_; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t n = x.dim(0), m = shape_.numel();
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      parallel_for(n, 256, [&](std::int64_t r) {
        const T* xr = xp + r * m;
        T* yr = yp + r * m;
        T mx = *std::max_element(xr, xr + m), sum = 0;
        for (std::int64_t i = 0; i < m; ++i) sum += (yr[i] = std::exp(xr[i] - mx));
        const T inv = T(1) / sum;
        for (std::int64_t i = 0; i < m; ++i) yr[i] *= inv;
      });
    });
  }

  void backward(const Tensor&, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t n = y.dim(0), m = shape_.numel();
      const T *yp = y.data<T>(), *dyp = dy.data<T>();
      T* dxp = dx->data<T>();
      parallel_for(n, 256, [&](std::int64_t r) {
        T dot = 0;
        for (std::int64_t i = 0; i < m; ++i) dot += dyp[r * m + i] * yp[r * m + i];
        for (std::int64_t i = 0; i < m; ++i)
          dxp[r * m + i] = yp[r * m + i] * (dyp[r * m + i] - dot);
      });
    });
  }

 private:
  Shape shape_;
};

Plugin* create(const Params&, const PluginContext&) { return new Softmax(); }

}  // namespace

// A softmax over each sample (dtnn/plugin_traits.hpp: a loss may take the model's gradient
// through it); the settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"softmax": true, "conformance": [
    {"input": [7]},
    {"input": [4, 5, 3], "batch": 3}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "softmax",
                   .description = "softmax over each sample (numerically stable)",
                   .parameters = "{}", .traits = kTraits, .factory = create)
