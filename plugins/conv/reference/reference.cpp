// reference: the plain-loop convolution every other algorithm is checked against. Obviously
// correct over speed: one loop nest per pass, sums in double, any stride/padding/dilation/layout,
// grouped or not (output channel k reads the channels of its group, k / (K/G)).
//   y[n, oy, ox, k]    = sum_{ky, kx, c} x[n, oy*sh - ph + ky*dh, ox*sw - pw + kx*dw, c] * w[ky,
//   kx, c, k] dx[n, iy, ix, c]   = sum over every (oy, ox, ky, kx, k) that read x[n, iy, ix, c] of
//   dy * w dw[ky, kx, c, k]  += sum_{n, oy, ox} x[n, iy, ix, c] * dy[n, oy, ox, k]
// (shown in NHWC; NCHW uses the same loops with other offsets).
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class Reference final : public ConvAlgorithm {
 public:
  std::string name() const override { return "reference"; }
  bool supports(const ConvGeometry&, ConvPass, std::string&) const override { return true; }
  void prepare(const ConvGeometry& g) override { g_ = g; }

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *xp = x.data<T>(), *wp = w.data<T>();
      T* yp = y.data<T>();
      for (std::int64_t n = 0; n < x.dim(0); ++n)
        for (std::int64_t oy = 0; oy < g_.ho(); ++oy)
          for (std::int64_t ox = 0; ox < g_.wo(); ++ox)
            for (std::int64_t k = 0; k < g_.k; ++k) {
              double sum = 0;
              each_tap(
                  oy, ox, [&](std::int64_t ky, std::int64_t kx, std::int64_t iy, std::int64_t ix) {
                    for (std::int64_t c = 0; c < per_group(); ++c)
                      sum += double(xp[xi(n, iy, ix, first(k) + c)]) * double(wp[wi(ky, kx, c, k)]);
                  });
              yp[yi(n, oy, ox, k)] = static_cast<T>(sum);
            }
    });
  }

  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    dispatch_dtype(dy.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *dyp = dy.data<T>(), *wp = w.data<T>();
      std::vector<double> acc(static_cast<std::size_t>(dx.numel()), 0.0);
      for (std::int64_t n = 0; n < dy.dim(0); ++n)
        for (std::int64_t oy = 0; oy < g_.ho(); ++oy)
          for (std::int64_t ox = 0; ox < g_.wo(); ++ox)
            for (std::int64_t k = 0; k < g_.k; ++k) {
              const double d = dyp[yi(n, oy, ox, k)];
              each_tap(oy, ox,
                       [&](std::int64_t ky, std::int64_t kx, std::int64_t iy, std::int64_t ix) {
                         for (std::int64_t c = 0; c < per_group(); ++c)
                           acc[static_cast<std::size_t>(xi(n, iy, ix, first(k) + c))] +=
                               d * double(wp[wi(ky, kx, c, k)]);
                       });
            }
      T* dxp = dx.data<T>();
      for (std::int64_t i = 0; i < dx.numel(); ++i)
        dxp[i] = static_cast<T>(acc[static_cast<std::size_t>(i)]);
    });
  }

  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *xp = x.data<T>(), *dyp = dy.data<T>();
      std::vector<double> acc(static_cast<std::size_t>(dw.numel()), 0.0);
      for (std::int64_t n = 0; n < x.dim(0); ++n)
        for (std::int64_t oy = 0; oy < g_.ho(); ++oy)
          for (std::int64_t ox = 0; ox < g_.wo(); ++ox)
            for (std::int64_t k = 0; k < g_.k; ++k) {
              const double d = dyp[yi(n, oy, ox, k)];
              each_tap(oy, ox,
                       [&](std::int64_t ky, std::int64_t kx, std::int64_t iy, std::int64_t ix) {
                         for (std::int64_t c = 0; c < per_group(); ++c)
                           acc[static_cast<std::size_t>(wi(ky, kx, c, k))] +=
                               double(xp[xi(n, iy, ix, first(k) + c)]) * d;
                       });
            }
      T* dwp = dw.data<T>();
      for (std::int64_t i = 0; i < dw.numel(); ++i)
        dwp[i] += static_cast<T>(acc[static_cast<std::size_t>(i)]);
    });
  }

 private:
  // f(ky, kx, iy, ix) for every kernel tap of output (oy, ox) that lands inside the image.
  template <class F>
  void each_tap(std::int64_t oy, std::int64_t ox, F&& f) const {
    for (std::int64_t ky = 0; ky < g_.kh; ++ky) {
      const std::int64_t iy = oy * g_.stride_h - g_.pad_h + ky * g_.dilation_h;
      if (iy < 0 || iy >= g_.h) continue;
      for (std::int64_t kx = 0; kx < g_.kw; ++kx) {
        const std::int64_t ix = ox * g_.stride_w - g_.pad_w + kx * g_.dilation_w;
        if (ix >= 0 && ix < g_.w) f(ky, kx, iy, ix);
      }
    }
  }
  bool nhwc() const { return g_.layout == Layout::nhwc; }
  std::int64_t per_group() const { return g_.c / g_.groups; }  // input channels a filter reads
  // The first input channel output channel k reads.
  std::int64_t first(std::int64_t k) const { return k / (g_.k / g_.groups) * per_group(); }
  std::int64_t xi(std::int64_t n, std::int64_t y, std::int64_t x, std::int64_t c) const {
    return nhwc() ? ((n * g_.h + y) * g_.w + x) * g_.c + c : ((n * g_.c + c) * g_.h + y) * g_.w + x;
  }
  std::int64_t yi(std::int64_t n, std::int64_t y, std::int64_t x, std::int64_t k) const {
    return nhwc() ? ((n * g_.ho() + y) * g_.wo() + x) * g_.k + k
                  : ((n * g_.k + k) * g_.ho() + y) * g_.wo() + x;
  }
  std::int64_t wi(std::int64_t ky, std::int64_t kx, std::int64_t c, std::int64_t k) const {
    return nhwc() ? ((ky * g_.kw + kx) * per_group() + c) * g_.k + k
                  : ((k * per_group() + c) * g_.kh + ky) * g_.kw + kx;
  }

  ConvGeometry g_;
};

Plugin* create(const Params&, const PluginContext&) { return new Reference(); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "conv", .name = "reference",
                   .description = "plain loops, sums in double: the yardstick for every algorithm",
                   .parameters = "{}", .traits = R"({"groups": true})", .factory = create)
