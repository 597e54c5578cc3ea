// depthwise_conv2d: each channel convolved with its own KH x KW filter (PyDTNN's DepthwiseConv2D,
// MobileNet's depthwise layers; depth multiplier 1):
//   y(n, oy, ox, c) = sum over (ky, kx) of x(n, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw, c)
//                     * w(ky, kx, c) + b(c)
// Filters are [KH, KW, C] in NHWC (channels innermost, so the loops vectorise along channels) and
// [C, KH, KW] in NCHW. Backward: db += sum of dy; dw += sum of x * dy (per thread, then added);
// dx(input pixel) = sum over the taps that read it of w * dy, gathered (no races).
#include <omp.h>

#include <algorithm>
#include <string>
#include <vector>

#include "conv_base.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class DepthwiseConv2d final : public layer_parameters::ConvBase {
 public:
  explicit DepthwiseConv2d(const Params& p) : ConvBase(p, /*depthwise=*/true) {}

  std::string attributes() const override {
    auto s = [](std::int64_t v) { return std::to_string(v); };
    return "padding=(" + s(g_.pad_h) + "," + s(g_.pad_w) + ") stride=(" + s(g_.stride_h) + "," +
           s(g_.stride_w) + ")";
  }

  void build(const LayerBuildContext& ctx) override {
    build_geometry(ctx, ctx.layout);
    build_weights(ctx, Device::cpu);
    nhwc_ = ctx.layout == Layout::nhwc;
    partial_ =
        Tensor::empty(Shape{std::max(1, omp_get_max_threads()) * (w_.numel() + g_.c)}, ctx.dtype);
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, y); });
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      filter_t<T>(x, dy);
      if (dx) data_t<T>(dy, *dx);
    });
  }

 private:
  // Offsets within a sample: element (y, x, c) of an h x w image; filter tap (ky, kx) of c.
  std::int64_t at(std::int64_t y, std::int64_t x, std::int64_t c, std::int64_t h,
                  std::int64_t w) const {
    return nhwc_ ? (y * w + x) * g_.c + c : (c * h + y) * w + x;
  }
  std::int64_t tap(std::int64_t ky, std::int64_t kx, std::int64_t c) const {
    return nhwc_ ? (ky * g_.kw + kx) * g_.c + c : (c * g_.kh + ky) * g_.kw + kx;
  }
  // For output pixel (oy, ox): calls f(input offset of channel 0, tap offset of channel 0) for
  // each tap that reads inside the image. Channel c is at + c * step for both (NHWC step 1; NCHW
  // planes: the caller adds c's plane).
  template <class F>
  void taps_of(std::int64_t oy, std::int64_t ox, F&& f) const {
    for (std::int64_t ky = 0; ky < g_.kh; ++ky) {
      const std::int64_t iy = oy * g_.stride_h - g_.pad_h + ky * g_.dilation_h;
      if (iy < 0 || iy >= g_.h) continue;
      for (std::int64_t kx = 0; kx < g_.kw; ++kx) {
        const std::int64_t ix = ox * g_.stride_w - g_.pad_w + kx * g_.dilation_w;
        if (ix >= 0 && ix < g_.w) f(at(iy, ix, 0, g_.h, g_.w), tap(ky, kx, 0));
      }
    }
  }
  // Channel step of activations and filters: NHWC 1; NCHW a plane (activation) and a window.
  std::int64_t in_step() const { return nhwc_ ? 1 : g_.h * g_.w; }
  std::int64_t out_step() const { return nhwc_ ? 1 : g_.ho() * g_.wo(); }
  std::int64_t tap_step() const { return nhwc_ ? 1 : g_.kh * g_.kw; }

  template <class T>
  void forward_t(const Tensor& xt, Tensor& yt) {
    const std::int64_t in_size = g_.h * g_.w * g_.c, out_size = g_.ho() * g_.wo() * g_.c;
    const std::int64_t C = g_.c, is = in_step(), os = out_step(), ts = tap_step();
    const T* w = w_.data<T>();
    const T* b = use_bias_ ? b_.data<T>() : nullptr;
    parallel_for(xt.dim(0) * g_.ho(), 1, [&](std::int64_t row) {  // row = (n, oy)
      const std::int64_t n = row / g_.ho(), oy = row % g_.ho();
      const T* x = xt.data<T>() + n * in_size;
      T* y = yt.data<T>() + n * out_size;
      for (std::int64_t ox = 0; ox < g_.wo(); ++ox) {
        T* __restrict out = y + at(oy, ox, 0, g_.ho(), g_.wo());
        for (std::int64_t c = 0; c < C; ++c) out[c * os] = b ? b[c] : T(0);
        taps_of(oy, ox, [&](std::int64_t xi, std::int64_t wi) {
          const T* __restrict in = x + xi;
          const T* __restrict f = w + wi;
          for (std::int64_t c = 0; c < C; ++c) out[c * os] += in[c * is] * f[c * ts];
        });
      }
    });
  }

  // dw and db, each thread over its own samples into its own partial sums, then added.
  template <class T>
  void filter_t(const Tensor& xt, const Tensor& dyt) {
    const std::int64_t in_size = g_.h * g_.w * g_.c, out_size = g_.ho() * g_.wo() * g_.c;
    const std::int64_t C = g_.c, is = in_step(), os = out_step(), ts = tap_step();
    const std::int64_t per_thread = w_.numel() + C;
    T* partial = partial_.data<T>();
    int threads = 1;
#pragma omp parallel
    {
#pragma omp single
      threads = omp_get_num_threads();
      T* mine = partial + omp_get_thread_num() * per_thread;
      std::fill(mine, mine + per_thread, T(0));
#pragma omp for schedule(static)
      for (std::int64_t row = 0; row < xt.dim(0) * g_.ho(); ++row) {
        const std::int64_t n = row / g_.ho(), oy = row % g_.ho();
        const T* x = xt.data<T>() + n * in_size;
        const T* dy = dyt.data<T>() + n * out_size;
        for (std::int64_t ox = 0; ox < g_.wo(); ++ox) {
          const T* __restrict g = dy + at(oy, ox, 0, g_.ho(), g_.wo());
          T* __restrict db = mine + w_.numel();
          for (std::int64_t c = 0; c < C; ++c) db[c] += g[c * os];
          taps_of(oy, ox, [&](std::int64_t xi, std::int64_t wi) {
            const T* __restrict in = x + xi;
            T* __restrict f = mine + wi;
            for (std::int64_t c = 0; c < C; ++c) f[c * ts] += in[c * is] * g[c * os];
          });
        }
      }
    }
    T* dw = dw_.data<T>();
    for (int t = 0; t < threads; ++t) {
      const T* part = partial + t * per_thread;
      for (std::int64_t i = 0; i < w_.numel(); ++i) dw[i] += part[i];
      if (use_bias_)
        for (std::int64_t c = 0; c < C; ++c) db_.data<T>()[c] += part[w_.numel() + c];
    }
  }

  // dx(n, iy, ix, c) = sum over taps (ky, kx) and output pixels (oy, ox) that read it through
  // that tap of w(ky, kx, c) * dy(n, oy, ox, c): gathered per input pixel.
  template <class T>
  void data_t(const Tensor& dyt, Tensor& dxt) {
    const std::int64_t in_size = g_.h * g_.w * g_.c, out_size = g_.ho() * g_.wo() * g_.c;
    const std::int64_t C = g_.c, is = in_step(), os = out_step(), ts = tap_step();
    const std::int64_t ho = g_.ho(), wo = g_.wo();
    const T* w = w_.data<T>();
    parallel_for(dyt.dim(0) * g_.h, 1, [&](std::int64_t row) {  // row = (n, iy)
      const std::int64_t n = row / g_.h, iy = row % g_.h;
      const T* dy = dyt.data<T>() + n * out_size;
      T* dx = dxt.data<T>() + n * in_size;
      for (std::int64_t ix = 0; ix < g_.w; ++ix) {
        T* __restrict out = dx + at(iy, ix, 0, g_.h, g_.w);
        for (std::int64_t c = 0; c < C; ++c) out[c * is] = T(0);
        for (std::int64_t ky = 0; ky < g_.kh; ++ky)
          for (std::int64_t kx = 0; kx < g_.kw; ++kx) {
            std::int64_t oy, ox;
            if (!g_.output_reading(iy, ix, ky, kx, ho, wo, oy, ox)) continue;
            const T* __restrict g = dy + at(oy, ox, 0, ho, wo);
            const T* __restrict f = w + tap(ky, kx, 0);
            for (std::int64_t c = 0; c < C; ++c) out[c * is] += f[c * ts] * g[c * os];
          }
      }
    });
  }

  bool nhwc_ = true;
  Tensor partial_;  // [threads][weights + C] backward-filter's per-thread sums
};

Plugin* create(const Params& p, const PluginContext&) { return new DepthwiseConv2d(p); }

}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"kernel": 3, "padding": 1}, "input": [5, 4, 3]},
    {"params": {"kernel": [3, 2], "padding": 1, "stride": 2}, "input": [6, 5, 2]},
    {"params": {"kernel": 2, "dilation": 2, "use_bias": false}, "input": [5, 5, 4]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "depthwise_conv2d",
                   .description =
                       "depthwise 2-D convolution: one KH x KW filter per channel (MobileNet)",
                   .parameters = dtnn::layer_parameters::kDepthwiseConv2dParameters,
                   .traits = kTraits, .factory = create)
