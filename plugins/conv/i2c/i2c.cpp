// i2c: im2col + one BLIS GEMM over the whole minibatch (PyDTNN's default algorithm).
//
// NHWC, M = n*Ho*Wo rows, CKK = KH*KW*C:
//   cols[M, CKK] (row (n, oy, ox), column (ky, kx, c))    y[M, K]  = cols w[CKK, K]
//   dw[CKK, K] += cols^T dy                               dcols    = dy w^T, col2im-added into dx
// NCHW, cols[CKK, M] (row (c, ky, kx), column (n, oy, ox)) with CKK = C*KH*KW and w[K, CKK]:
//   t[K, M] = w cols, then y[n, k, p] = t[k, n*HoWo + p]
//   dw[K, CKK] += t cols^T with t = dy as [K, M]          dcols = w^T t, col2im-added into dx
// A 1x1, stride 1, unpadded NHWC convolution is a plain GEMM on x itself: no cols at all.
// backward_filter reuses the cols of the most recent forward when it saw the same x.
#include <cstring>
#include <utility>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

// Copy (or add) `span` contiguous values. Short spans, the common case of a kernel row with few
// channels, get a fixed-length body the compiler turns into a few vector moves.
template <class T, int N> void copy_fixed(T* d, const T* s, std::int64_t) {
  for (int i = 0; i < N; ++i) d[i] = s[i];
}
template <class T, int N> void add_fixed(T* d, const T* s, std::int64_t) {
  for (int i = 0; i < N; ++i) d[i] += s[i];
}
template <class T> void copy_any(T* d, const T* s, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) d[i] = s[i];
}
template <class T> void add_any(T* d, const T* s, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) d[i] += s[i];
}
template <class T> using SpanFn = void (*)(T*, const T*, std::int64_t);
template <class T, std::size_t... N>
SpanFn<T> pick(std::int64_t span, bool add, std::index_sequence<N...>) {
  static constexpr SpanFn<T> copies[] = {&copy_any<T>, &copy_fixed<T, static_cast<int>(N) + 1>...};
  static constexpr SpanFn<T> adds[] = {&add_any<T>, &add_fixed<T, static_cast<int>(N) + 1>...};
  const std::size_t i = span >= 1 && span <= static_cast<std::int64_t>(sizeof...(N)) ? static_cast<std::size_t>(span) : 0;
  return add ? adds[i] : copies[i];
}
template <class T> SpanFn<T> span_fn(std::int64_t span, bool add) {
  return pick<T>(span, add, std::make_index_sequence<32>{});
}

// The geometry as plain locals for the hot loops (ho/wo are divisions; compute them once).
struct Dims {
  explicit Dims(const ConvGeometry& g)
      : h(g.h), w(g.w), c(g.c), kh(g.kh), kw(g.kw), sh(g.stride_h), sw(g.stride_w), ph(g.pad_h),
        pw(g.pad_w), dh(g.dilation_h), dw(g.dilation_w), ho(g.ho()), wo(g.wo()) {}
  std::int64_t h, w, c, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo;
};

class Im2col final : public ConvAlgorithm {
 public:
  std::string name() const override { return "i2c"; }
  bool supports(const ConvGeometry&, ConvPass, std::string&) const override { return true; }

  void prepare(const ConvGeometry& g) override {
    g_ = g;
    pixels_ = g.ho() * g.wo();
    ckk_ = g.c * g.kh * g.kw;
    direct_gemm_ = g.layout == Layout::nhwc && g.kh == 1 && g.kw == 1 && g.stride_h == 1 &&
                   g.stride_w == 1 && g.pad_h == 0 && g.pad_w == 0;
    if (!direct_gemm_) cols_ = Tensor::empty(Shape{g.n * pixels_ * ckk_}, g.dtype);
    if (g.layout == Layout::nchw) t_ = Tensor::empty(Shape{g.k * g.n * pixels_}, g.dtype);
  }

  std::size_t workspace_bytes() const override {
    return (cols_.defined() ? cols_.bytes() : 0) + (t_.defined() ? t_.bytes() : 0);
  }

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, w, y); });
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    dispatch_dtype(dy.dtype(), [&](auto z) { backward_data_t<decltype(z)>(dy, w, dx); });
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    dispatch_dtype(x.dtype(), [&](auto z) { backward_filter_t<decltype(z)>(x, dy, dw); });
  }

 private:
  bool nhwc() const { return g_.layout == Layout::nhwc; }

  // The columns of x; with reuse, those of the last forward when it saw this same x.
  template <class T> const T* columns(const Tensor& x, bool reuse) {
    if (direct_gemm_) return x.data<T>();
    if (!reuse || cols_x_ != x.raw() || cols_n_ != x.dim(0)) {
      nhwc() ? im2col_nhwc<T>(x) : im2col_nchw<T>(x);
      cols_x_ = x.raw();
      cols_n_ = x.dim(0);
    }
    return cols_.data<T>();
  }

  template <class T> void forward_t(const Tensor& x, const Tensor& w, Tensor& y) {
    const std::int64_t m = x.dim(0) * pixels_;
    const T* cols = columns<T>(x, false);
    if (nhwc()) {
      gemm(false, false, m, g_.k, ckk_, T(1), cols, ckk_, w.data<T>(), g_.k, T(0), y.data<T>(), g_.k);
      return;
    }
    T* t = t_.data<T>();
    gemm(false, false, g_.k, m, ckk_, T(1), w.data<T>(), ckk_, cols, m, T(0), t, m);
    T* yp = y.data<T>();
    parallel_for(x.dim(0) * g_.k, 64, [&](std::int64_t plane) {  // plane = (n, k) of y
      const std::int64_t n = plane / g_.k, k = plane % g_.k;
      std::memcpy(yp + plane * pixels_, t + k * m + n * pixels_, sizeof(T) * static_cast<std::size_t>(pixels_));
    });
  }

  template <class T> void backward_filter_t(const Tensor& x, const Tensor& dy, Tensor& dw) {
    const std::int64_t m = x.dim(0) * pixels_;
    const T* cols = columns<T>(x, true);
    if (nhwc()) {
      gemm(true, false, ckk_, g_.k, m, T(1), cols, ckk_, dy.data<T>(), g_.k, T(1), dw.data<T>(), g_.k);
      return;
    }
    const T* t = dy_as_km<T>(dy);
    gemm(false, true, g_.k, ckk_, m, T(1), t, m, cols, m, T(1), dw.data<T>(), ckk_);
  }

  template <class T> void backward_data_t(const Tensor& dy, const Tensor& w, Tensor& dx) {
    const std::int64_t n = dy.dim(0), m = n * pixels_;
    if (direct_gemm_) {
      gemm(false, true, m, ckk_, g_.k, T(1), dy.data<T>(), g_.k, w.data<T>(), g_.k, T(0), dx.data<T>(), ckk_);
      return;
    }
    T* dcols = cols_.data<T>();
    cols_x_ = nullptr;  // the buffer now holds dcols
    if (nhwc()) {
      gemm(false, true, m, ckk_, g_.k, T(1), dy.data<T>(), g_.k, w.data<T>(), g_.k, T(0), dcols, ckk_);
      col2im_nhwc<T>(dcols, n, dx);
    } else {
      const T* t = dy_as_km<T>(dy);
      gemm(true, false, ckk_, m, g_.k, T(1), w.data<T>(), ckk_, t, m, T(0), dcols, m);
      col2im_nchw<T>(dcols, n, dx);
    }
  }

  // dy [n, K, HoWo] -> t [K, n*HoWo]
  template <class T> const T* dy_as_km(const Tensor& dy) {
    const std::int64_t n = dy.dim(0), m = n * pixels_;
    const T* d = dy.data<T>();
    T* t = t_.data<T>();
    parallel_for(n * g_.k, 64, [&](std::int64_t plane) {
      const std::int64_t s = plane / g_.k, k = plane % g_.k;
      std::memcpy(t + k * m + s * pixels_, d + plane * pixels_, sizeof(T) * static_cast<std::size_t>(pixels_));
    });
    return t;
  }

  // One row of cols per output pixel. With unit dilation along W, the KW*C values one kernel row
  // reads are contiguous in NHWC: one copy per (pixel, ky) when the row lies inside the image.
  template <class T> void im2col_nhwc(const Tensor& x) {
    const T* xp = x.data<T>();
    T* cols = cols_.data<T>();
    const Dims d(g_);
    const std::int64_t c = d.c, span = d.kw * c, ckk = ckk_;
    const bool contiguous = d.dw == 1;
    const SpanFn<T> copy = span_fn<T>(span, false);
    parallel_for(x.dim(0) * d.ho, 16, [=](std::int64_t line) {  // line = (n, oy)
      const std::int64_t n = line / d.ho, oy = line % d.ho;
      for (std::int64_t ox = 0; ox < d.wo; ++ox) {
        T* row = cols + (line * d.wo + ox) * ckk;
        const std::int64_t ix0 = ox * d.sw - d.pw;
        for (std::int64_t ky = 0; ky < d.kh; ++ky) {
          const std::int64_t iy = oy * d.sh - d.ph + ky * d.dh;
          T* dst = row + ky * span;
          if (iy < 0 || iy >= d.h) {
            for (std::int64_t i = 0; i < span; ++i) dst[i] = T(0);
            continue;
          }
          const T* src_row = xp + (n * d.h + iy) * d.w * c;
          if (contiguous && ix0 >= 0 && ix0 + d.kw <= d.w) {
            copy(dst, src_row + ix0 * c, span);
            continue;
          }
          for (std::int64_t kx = 0; kx < d.kw; ++kx) {
            const std::int64_t ix = ix0 + kx * d.dw;
            T* out = dst + kx * c;
            if (ix < 0 || ix >= d.w) {
              for (std::int64_t i = 0; i < c; ++i) out[i] = T(0);
            } else {
              for (std::int64_t i = 0; i < c; ++i) out[i] = src_row[ix * c + i];
            }
          }
        }
      }
    });
  }

  // The adjoint of im2col_nhwc: every cols value is added back where it was read from.
  template <class T> void col2im_nhwc(const T* dcols, std::int64_t n, Tensor& dx) {
    T* dxp = dx.data<T>();
    const Dims d(g_);
    const std::int64_t c = d.c, image = d.h * d.w * c, span = d.kw * c, ckk = ckk_, pixels = pixels_;
    const bool contiguous = d.dw == 1;
    const SpanFn<T> add = span_fn<T>(span, true);
    parallel_for(n, 1, [=](std::int64_t s) {  // one sample per thread: no two threads add to one dx
      T* dxs = dxp + s * image;
      std::memset(dxs, 0, sizeof(T) * static_cast<std::size_t>(image));
      for (std::int64_t oy = 0; oy < d.ho; ++oy)
        for (std::int64_t ox = 0; ox < d.wo; ++ox) {
          const T* row = dcols + (s * pixels + oy * d.wo + ox) * ckk;
          const std::int64_t ix0 = ox * d.sw - d.pw;
          for (std::int64_t ky = 0; ky < d.kh; ++ky) {
            const std::int64_t iy = oy * d.sh - d.ph + ky * d.dh;
            if (iy < 0 || iy >= d.h) continue;
            T* dst_row = dxs + iy * d.w * c;
            const T* src = row + ky * span;
            if (contiguous && ix0 >= 0 && ix0 + d.kw <= d.w) {
              add(dst_row + ix0 * c, src, span);
              continue;
            }
            for (std::int64_t kx = 0; kx < d.kw; ++kx) {
              const std::int64_t ix = ix0 + kx * d.dw;
              if (ix < 0 || ix >= d.w) continue;
              for (std::int64_t i = 0; i < c; ++i) dst_row[ix * c + i] += src[kx * c + i];
            }
          }
        }
    });
  }

  template <class T> void im2col_nchw(const Tensor& x) {
    const T* xp = x.data<T>();
    T* cols = cols_.data<T>();
    const std::int64_t n = x.dim(0), m = n * pixels_;
    parallel_for(ckk_, 1, [&](std::int64_t row) {  // row = (c, ky, kx)
      const std::int64_t c = row / (g_.kh * g_.kw), ky = (row / g_.kw) % g_.kh, kx = row % g_.kw;
      T* dst = cols + row * m;
      for (std::int64_t s = 0; s < n; ++s)
        for (std::int64_t oy = 0; oy < g_.ho(); ++oy) {
          const std::int64_t iy = oy * g_.stride_h - g_.pad_h + ky * g_.dilation_h;
          T* out = dst + s * pixels_ + oy * g_.wo();
          const T* src = xp + ((s * g_.c + c) * g_.h + iy) * g_.w;
          for (std::int64_t ox = 0; ox < g_.wo(); ++ox) {
            const std::int64_t ix = ox * g_.stride_w - g_.pad_w + kx * g_.dilation_w;
            out[ox] = (iy < 0 || iy >= g_.h || ix < 0 || ix >= g_.w) ? T(0) : src[ix];
          }
        }
    });
  }

  template <class T> void col2im_nchw(const T* dcols, std::int64_t n, Tensor& dx) {
    T* dxp = dx.data<T>();
    const std::int64_t m = n * pixels_, plane_size = g_.h * g_.w;
    parallel_for(n * g_.c, 1, [&](std::int64_t plane) {  // plane = (s, c) of dx
      const std::int64_t s = plane / g_.c, c = plane % g_.c;
      T* dst = dxp + plane * plane_size;
      std::memset(dst, 0, sizeof(T) * static_cast<std::size_t>(plane_size));
      for (std::int64_t ky = 0; ky < g_.kh; ++ky)
        for (std::int64_t kx = 0; kx < g_.kw; ++kx) {
          const T* src = dcols + ((c * g_.kh + ky) * g_.kw + kx) * m + s * pixels_;
          for (std::int64_t oy = 0; oy < g_.ho(); ++oy) {
            const std::int64_t iy = oy * g_.stride_h - g_.pad_h + ky * g_.dilation_h;
            if (iy < 0 || iy >= g_.h) continue;
            for (std::int64_t ox = 0; ox < g_.wo(); ++ox) {
              const std::int64_t ix = ox * g_.stride_w - g_.pad_w + kx * g_.dilation_w;
              if (ix >= 0 && ix < g_.w) dst[iy * g_.w + ix] += src[oy * g_.wo() + ox];
            }
          }
        }
    });
  }

  ConvGeometry g_;
  std::int64_t pixels_ = 0, ckk_ = 0;
  bool direct_gemm_ = false;
  Tensor cols_, t_;
  const void* cols_x_ = nullptr;  // the x whose columns cols_ holds
  std::int64_t cols_n_ = 0;
};

Plugin* create(const Params&, const PluginContext&) { return new Im2col(); }

}  // namespace

DTNN_PLUGIN("conv", "i2c", "im2col + one BLIS GEMM over the whole minibatch (any geometry)", "{}",
            create)
