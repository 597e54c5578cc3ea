// avgpool2d: y(oy, ox, c) = sum over the window of x / (ph * pw); padded positions count as
// zeros (PyTorch's count_include_pad). Backward: each x in the window gets dy / (ph * pw).
#include <cstdint>

#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/window.hpp"
#include "pool2d_parameters.hpp"

namespace {

using namespace dtnn;

class AvgPool2d final : public Layer {
 public:
  explicit AvgPool2d(const Params& p) : params_(p) {}
  std::string type() const override { return "avgpool2d"; }
  Shape output_shape() const override { return g_.out_shape(); }
  std::string attributes() const override { return g_.str(); }
  void build(const LayerBuildContext& ctx) override {
    g_ = Window2d::from(params_, ctx.input_shape, ctx.layout);
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t in_size = g_.h * g_.w * g_.c, out_size = g_.ho() * g_.wo() * g_.c;
      const T inv = T(1) / static_cast<T>(g_.ph * g_.pw);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      parallel_for(x.dim(0), 1, [&](std::int64_t n) {
        for (std::int64_t oy = 0; oy < g_.ho(); ++oy)
          for (std::int64_t ox = 0; ox < g_.wo(); ++ox)
            for (std::int64_t c = 0; c < g_.c; ++c) {
              T sum = 0;
              visit(oy, ox, c, [&](std::int64_t at) { sum += xp[n * in_size + at]; });
              yp[n * out_size + g_.out_at(oy, ox, c)] = sum * inv;
            }
      });
    });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t in_size = g_.h * g_.w * g_.c, out_size = g_.ho() * g_.wo() * g_.c;
      const T inv = T(1) / static_cast<T>(g_.ph * g_.pw);
      const T* dyp = dy.data<T>();
      T* dxp = dx->data<T>();
      parallel_for(x.dim(0), 1, [&](std::int64_t n) {
        T* dxs = dxp + n * in_size;
        for (std::int64_t i = 0; i < in_size; ++i) dxs[i] = T(0);
        for (std::int64_t oy = 0; oy < g_.ho(); ++oy)
          for (std::int64_t ox = 0; ox < g_.wo(); ++ox)
            for (std::int64_t c = 0; c < g_.c; ++c) {
              const T g = dyp[n * out_size + g_.out_at(oy, ox, c)] * inv;
              visit(oy, ox, c, [&](std::int64_t at) { dxs[at] += g; });
            }
      });
    });
  }

 private:
  // Calls f(offset) for every in-image input position of output (oy, ox, c)'s window.
  template <class F>
  void visit(std::int64_t oy, std::int64_t ox, std::int64_t c, F&& f) const {
    for (std::int64_t ky = 0; ky < g_.ph; ++ky) {
      const std::int64_t iy = oy * g_.sh - g_.pad_h + ky;
      if (iy < 0 || iy >= g_.h) continue;
      for (std::int64_t kx = 0; kx < g_.pw; ++kx) {
        const std::int64_t ix = ox * g_.sw - g_.pad_w + kx;
        if (ix >= 0 && ix < g_.w) f(g_.in_at(iy, ix, c));
      }
    }
  }

  Params params_;
  Window2d g_;
};

Plugin* create(const Params& p, const PluginContext&) { return new AvgPool2d(p); }

}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"pool": 2}, "input": [4, 6, 3]},
    {"params": {"pool": 3, "stride": 2, "padding": 1}, "input": [5, 5, 2]},
    {"params": {"pool": 0}, "input": [3, 4, 5]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "avgpool2d",
                   .description = "2-D average pooling (stride 0 means stride = pool)",
                   .parameters = dtnn::layer_parameters::kPool2dParameters, .traits = kTraits,
                   .factory = create)
