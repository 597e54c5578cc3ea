// maxpool2d: y(oy, ox, c) = max over the window of x; padding never wins.
// Backward: dx(argmax) += dy for each output; dx is zero elsewhere.
#include <algorithm>
#include <cstdint>
#include <limits>

#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/simd.hpp"
#include "dtnn/window.hpp"
#include "pool2d_parameters.hpp"

namespace {

using namespace dtnn;

class MaxPool2d final : public Layer {
 public:
  explicit MaxPool2d(const Params& p) : params_(p) {}
  std::string type() const override { return "maxpool2d"; }
  Shape output_shape() const override { return g_.out_shape(); }
  std::string attributes() const override { return g_.str(); }

  void build(const LayerBuildContext& ctx) override {
    g_ = Window2d::from(params_, ctx.input_shape, ctx.layout);
    // Where each output's maximum came from, as an offset within its sample.
    argmax_index_.assign(static_cast<std::size_t>(g_.out_shape().numel() * ctx.max_batch), 0);
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    if (g_.layout == Layout::nhwc && x.dtype() == DType::float32 && g_.c % simd::kLanes<float> == 0)
      return forward_nhwc_vector(x, y);
    dispatch_dtype(x.dtype(), [&](auto z) { forward_any<decltype(z)>(x, y); });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t in_size = g_.h * g_.w * g_.c, out_size = g_.ho() * g_.wo() * g_.c;
      const T* dyp = dy.data<T>();
      T* dxp = dx->data<T>();
      const std::int32_t* arg = argmax_index_.data();
      parallel_for(x.dim(0), 1, [&](std::int64_t n) {
        T* dxs = dxp + n * in_size;
        for (std::int64_t i = 0; i < in_size; ++i) dxs[i] = T(0);
        for (std::int64_t o = n * out_size; o < (n + 1) * out_size; ++o) dxs[arg[o]] += dyp[o];
      });
    });
  }

 private:
  // NHWC, float, C a multiple of the vector width: compare-and-blend on whole vectors (a scalar
  // compare-and-branch mispredicts on real activations and costs several times more).
  void forward_nhwc_vector(const Tensor& x, Tensor& y) {
    using V = simd::Vec<float>;
    typedef std::int32_t I __attribute__((vector_size(sizeof(V))));
    constexpr int L = simd::kLanes<float>;
    const std::int64_t h = g_.h, w = g_.w, c = g_.c, ho = g_.ho(), wo = g_.wo();
    const std::int64_t ph = g_.ph, pw = g_.pw, sh = g_.sh, sw = g_.sw, pad_h = g_.pad_h,
                       pad_w = g_.pad_w;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    std::int32_t* arg = argmax_index_.data();
    I lane_index;
    for (int l = 0; l < L; ++l) lane_index[l] = l;
    parallel_for(x.dim(0) * ho, 16, [=](std::int64_t line) {
      const std::int64_t n = line / ho, oy = line % ho;
      const float* xs = xp + n * h * w * c;
      for (std::int64_t ox = 0; ox < wo; ++ox)
        for (std::int64_t c0 = 0; c0 < c; c0 += L) {
          V best = V{} - __builtin_huge_valf();
          I where = I{};
          for (std::int64_t ky = 0; ky < ph; ++ky) {
            const std::int64_t iy = oy * sh - pad_h + ky;
            if (iy < 0 || iy >= h) continue;
            for (std::int64_t kx = 0; kx < pw; ++kx) {
              const std::int64_t ix = ox * sw - pad_w + kx;
              if (ix < 0 || ix >= w) continue;
              const std::int32_t at = static_cast<std::int32_t>((iy * w + ix) * c + c0);
              const V v = simd::load(xs + at);
              const I larger = v > best;  // all ones where v wins
              best = larger ? v : best;
              where = larger ? at + lane_index : where;
            }
          }
          const std::int64_t o = (line * wo + ox) * c + c0;
          simd::store(yp + o, best);
          __builtin_memcpy(arg + o, &where, sizeof where);
        }
    });
  }

  // Any layout and dtype: per-element offsets through the window geometry.
  template <class T>
  void forward_any(const Tensor& x, Tensor& y) {
    const std::int64_t in_size = g_.h * g_.w * g_.c, out_size = g_.ho() * g_.wo() * g_.c;
    const T* xp = x.data<T>();
    T* yp = y.data<T>();
    std::int32_t* arg = argmax_index_.data();
    parallel_for(x.dim(0), 1, [&](std::int64_t n) {
      const T* xs = xp + n * in_size;
      for (std::int64_t oy = 0; oy < g_.ho(); ++oy)
        for (std::int64_t ox = 0; ox < g_.wo(); ++ox)
          for (std::int64_t c = 0; c < g_.c; ++c) {
            T best = -std::numeric_limits<T>::infinity();
            std::int64_t where = g_.in_at(oy * g_.sh - g_.pad_h < 0 ? 0 : oy * g_.sh - g_.pad_h,
                                          ox * g_.sw - g_.pad_w < 0 ? 0 : ox * g_.sw - g_.pad_w, c);
            for (std::int64_t ky = 0; ky < g_.ph; ++ky) {
              const std::int64_t iy = oy * g_.sh - g_.pad_h + ky;
              if (iy < 0 || iy >= g_.h) continue;
              for (std::int64_t kx = 0; kx < g_.pw; ++kx) {
                const std::int64_t ix = ox * g_.sw - g_.pad_w + kx;
                if (ix < 0 || ix >= g_.w) continue;
                const std::int64_t at = g_.in_at(iy, ix, c);
                if (xs[at] > best) {
                  best = xs[at];
                  where = at;
                }
              }
            }
            const std::int64_t o = n * out_size + g_.out_at(oy, ox, c);
            yp[o] = best;
            arg[o] = static_cast<std::int32_t>(where);
          }
    });
  }

  Params params_;
  Window2d g_;
  std::vector<std::int32_t> argmax_index_;
};

Plugin* create(const Params& p, const PluginContext&) { return new MaxPool2d(p); }

}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"pool": 2}, "input": [4, 6, 3]},
    {"params": {"pool": 3, "stride": 2, "padding": 1}, "input": [5, 5, 2]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "maxpool2d",
                   .description = "2-D max pooling (stride 0 means stride = pool)",
                   .parameters = dtnn::layer_parameters::kPool2dParameters, .traits = kTraits,
                   .factory = create)
