// i2c: im2col + one BLIS GEMM over the whole minibatch (PyDTNN's default algorithm).
//
// NHWC, M = n*Ho*Wo rows, CKK = KH*KW*C:
//   cols[M, CKK] (row (n, oy, ox), column (ky, kx, c))    y[M, K]  = cols w[CKK, K]
//   dw[CKK, K] += cols^T dy                               dcols    = dy w^T, col2im-added into dx
// NCHW, cols[CKK, M] (row (c, ky, kx), column (n, oy, ox)) with CKK = C*KH*KW and w[K, CKK]:
//   t[K, M] = w cols, then y[n, k, p] = t[k, n*HoWo + p]
//   dw[K, CKK] += t cols^T with t = dy as [K, M]          dcols = w^T t, col2im-added into dx
// A 1x1, stride 1, unpadded NHWC convolution is a plain GEMM on x itself: no cols at all.
// Grouped (NHWC): per group g, its channels' cols[M, KH*KW*C/G] and one GEMM per pass against the
// group's K/G filters (columns of w, y and dy at leading dimension K); dx gathers every group's.
//
// The minibatch is processed in slabs of samples whose cols fit in slab_bytes (default 256 MiB),
// one GEMM per slab; when the whole minibatch's cols fit, that is one GEMM (PyDTNN's way), and
// backward_filter reuses the cols of the most recent forward on the same x when the workspace
// still holds them (with conv.workspace "per_layer" always; in a shared workspace when no other
// layer's pass came in between, as for a model's last conv layer). slab_bytes 0: the whole
// minibatch always. Several slabs cost time (backward_filter rebuilds the cols of every slab but
// one: 10-25% on simplecnn with tiny slabs; VGG-16 at 224x224, batch 32, 2-3% with 256 MiB ones)
// and save memory (that VGG-16's training 8.2 -> 4.9 GB: its 224x224x64 layers' cols of a whole
// batch are 3.5 GB).
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

// Fixed-length copy and add between buffers that never overlap (cols and images): with the
// promise made explicit the compiler emits whole-vector moves instead of scalar ones.
template <int N, class T>
inline void copy_n(T* __restrict d, const T* __restrict s) {
  for (int i = 0; i < N; ++i) d[i] = s[i];
}
template <int N, class T>
inline void add_n(T* __restrict d, const T* __restrict s) {
  for (int i = 0; i < N; ++i) d[i] += s[i];
}

// The geometry as plain locals for the hot loops (ho/wo are divisions; compute them once).
struct Dims {
  explicit Dims(const ConvGeometry& g)
      : h(g.h),
        w(g.w),
        c(g.c),
        kh(g.kh),
        kw(g.kw),
        sh(g.stride_h),
        sw(g.stride_w),
        ph(g.pad_h),
        pw(g.pad_w),
        dh(g.dilation_h),
        dw(g.dilation_w),
        ho(g.ho()),
        wo(g.wo()) {}
  std::int64_t h, w, c, kh, kw, sh, sw, ph, pw, dh, dw, ho, wo;
};

class Im2col final : public ConvAlgorithm {
 public:
  explicit Im2col(const Params& p) : slab_bytes_(p.get_int("slab_bytes")) {
    if (slab_bytes_ < 0)
      p.fail("slab_bytes", "an integer >= 0 (bytes of columns per slab; 0: the whole minibatch)");
  }
  std::string name() const override { return "i2c"; }
  bool supports(const ConvGeometry& g, ConvPass, std::string& why_not) const override {
    if (g.groups != 1 && g.layout != Layout::nhwc) {
      why_not = "grouped convolutions in NHWC only";
      return false;
    }
    return true;
  }

  void prepare(const ConvGeometry& g) override {
    g_ = g;
    pixels_ = g.ho() * g.wo();
    ckk_ = g.c / g.groups * g.kh * g.kw;  // a group's
    direct_gemm_ = g.layout == Layout::nhwc && g.kh == 1 && g.kw == 1 && g.stride_h == 1 &&
                   g.stride_w == 1 && g.pad_h == 0 && g.pad_w == 0;
    const std::int64_t sample_bytes =
        pixels_ * ckk_ * static_cast<std::int64_t>(dtype_size(g.dtype));
    slab_ = slab_bytes_ == 0 ? g.n : std::clamp<std::int64_t>(slab_bytes_ / sample_bytes, 1, g.n);
    if (g.layout == Layout::nchw) slab_ = g.n;  // NCHW transposes whole-batch results: one slab
    const std::size_t size = dtype_size(g.dtype);
    WorkspaceSlices slices;
    if (!direct_gemm_) cols_at_ = slices.add<std::byte>(slab_ * pixels_ * ckk_ * size);
    if (g.layout == Layout::nchw) t_at_ = slices.add<std::byte>(g.k * g.n * pixels_ * size);
    workspace_bytes_ = slices.bytes();
    workspace().reserve(workspace_bytes_);
  }

  std::size_t workspace_bytes() const override { return workspace_bytes_; }

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    memory_ = claim_workspace();
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, w, y); });
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    memory_ = claim_workspace();
    dispatch_dtype(dy.dtype(), [&](auto z) { backward_data_t<decltype(z)>(dy, w, dx); });
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    if (!workspace().holds(this)) cols_x_ = nullptr;  // another layer's pass came in between
    memory_ = claim_workspace();
    dispatch_dtype(x.dtype(), [&](auto z) { backward_filter_t<decltype(z)>(x, dy, dw); });
  }

 private:
  bool nhwc() const { return g_.layout == Layout::nhwc; }

  // The columns of x; with reuse, those of the last forward when it saw this same x.
  template <class T>
  const T* columns(const Tensor& x, bool reuse) {
    if (direct_gemm_) return x.data<T>();
    if (!reuse || cols_x_ != x.raw() || cols_n_ != x.dim(0)) {
      nhwc() ? im2col_nhwc<T>(x) : im2col_nchw<T>(x);
      cols_x_ = x.raw();
      cols_n_ = x.dim(0);
    }
    return cols<T>();
  }
  template <class T>
  T* cols() const {
    return slice<T>(memory_, cols_at_);
  }

  template <class T>
  void forward_t(const Tensor& x, const Tensor& w, Tensor& y) {
    if (g_.groups > 1) return grouped_forward<T>(x, w, y);
    if (nhwc()) {
      for_each_slab(x.dim(0), [&](std::int64_t s0, std::int64_t s1) {
        const Tensor xs = x.slice_batch(s0, s1);
        const T* cols = columns<T>(xs, false);
        gemm(g_.precision, false, false, (s1 - s0) * pixels_, g_.k, ckk_, T(1), cols, ckk_,
             w.data<T>(), g_.k, T(0), y.data<T>() + s0 * pixels_ * g_.k, g_.k);
      });
      return;
    }
    const std::int64_t m = x.dim(0) * pixels_;
    const T* cols = columns<T>(x, false);
    T* t = slice<T>(memory_, t_at_);
    gemm(g_.precision, false, false, g_.k, m, ckk_, T(1), w.data<T>(), ckk_, cols, m, T(0), t, m);
    T* yp = y.data<T>();
    parallel_for(x.dim(0) * g_.k, 64, [&](std::int64_t plane) {  // plane = (n, k) of y
      const std::int64_t n = plane / g_.k, k = plane % g_.k;
      std::memcpy(yp + plane * pixels_, t + k * m + n * pixels_,
                  sizeof(T) * static_cast<std::size_t>(pixels_));
    });
  }

  template <class T>
  void backward_filter_t(const Tensor& x, const Tensor& dy, Tensor& dw) {
    if (g_.groups > 1) return grouped_backward_filter<T>(x, dy, dw);
    if (nhwc()) {  // last slab first: forward left its cols in the buffer
      for_each_slab_reversed(x.dim(0), [&](std::int64_t s0, std::int64_t s1) {
        const T* cols = columns<T>(x.slice_batch(s0, s1), true);
        gemm(g_.precision, true, false, ckk_, g_.k, (s1 - s0) * pixels_, T(1), cols, ckk_,
             dy.data<T>() + s0 * pixels_ * g_.k, g_.k, T(1), dw.data<T>(), g_.k);
      });
      return;
    }
    const std::int64_t m = x.dim(0) * pixels_;
    const T* cols = columns<T>(x, true);
    const T* t = dy_as_km<T>(dy);
    gemm(g_.precision, false, true, g_.k, ckk_, m, T(1), t, m, cols, m, T(1), dw.data<T>(), ckk_);
  }

  template <class T>
  void backward_data_t(const Tensor& dy, const Tensor& w, Tensor& dx) {
    if (g_.groups > 1) return grouped_backward_data<T>(dy, w, dx);
    const std::int64_t n = dy.dim(0);
    if (direct_gemm_) {
      gemm(g_.precision, false, true, n * pixels_, ckk_, g_.k, T(1), dy.data<T>(), g_.k,
           w.data<T>(), g_.k, T(0), dx.data<T>(), ckk_);
      return;
    }
    T* dcols = cols<T>();
    cols_x_ = nullptr;  // the buffer now holds dcols
    if (nhwc()) {
      for_each_slab(n, [&](std::int64_t s0, std::int64_t s1) {
        gemm(g_.precision, false, true, (s1 - s0) * pixels_, ckk_, g_.k, T(1),
             dy.data<T>() + s0 * pixels_ * g_.k, g_.k, w.data<T>(), g_.k, T(0), dcols, ckk_);
        Tensor dxs = dx.slice_batch(s0, s1);
        col2im_nhwc<T>(dcols, s1 - s0, dxs);
      });
      return;
    }
    const std::int64_t m = n * pixels_;
    const T* t = dy_as_km<T>(dy);
    gemm(g_.precision, true, false, ckk_, m, g_.k, T(1), w.data<T>(), ckk_, t, m, T(0), dcols, m);
    col2im_nchw<T>(dcols, n, dx);
  }

  // Grouped, NHWC: group g's columns (or, 1x1 stride 1 unpadded, x's own channels of the group at
  // leading dimension C), then one GEMM per group into its K/G columns of y.
  template <class T>
  const T* group_columns(const Tensor& xs, std::int64_t group, std::int64_t& ld) {
    const std::int64_t per_group = g_.c / g_.groups;
    if (direct_gemm_) {
      ld = g_.c;
      return xs.data<T>() + group * per_group;
    }
    ld = ckk_;
    im2col_group<T>(xs, group);
    return cols<T>();
  }

  // f(m, g0, cols, ld) for every slab of x and group: the slab's m rows start at row g0 of y and
  // dy, cols are the group's columns of the slab (leading dimension ld).
  template <class T, class F>
  void for_each_slab_and_group(const Tensor& x, F&& f) {
    for_each_slab(x.dim(0), [&](std::int64_t s0, std::int64_t s1) {
      const Tensor xs = x.slice_batch(s0, s1);
      for (std::int64_t group = 0; group < g_.groups; ++group) {
        std::int64_t ld = 0;
        const T* cols = group_columns<T>(xs, group, ld);
        f((s1 - s0) * pixels_, s0 * pixels_, group, cols, ld);
      }
    });
    cols_x_ = nullptr;  // the buffer holds the last group's columns only
  }

  template <class T>
  void grouped_forward(const Tensor& x, const Tensor& w, Tensor& y) {
    const std::int64_t kg = g_.k / g_.groups;
    for_each_slab_and_group<T>(x, [&](std::int64_t m, std::int64_t row, std::int64_t group,
                                      const T* cols, std::int64_t ld) {
      gemm(g_.precision, false, false, m, kg, ckk_, T(1), cols, ld, w.data<T>() + group * kg, g_.k,
           T(0), y.data<T>() + row * g_.k + group * kg, g_.k);
    });
  }

  template <class T>
  void grouped_backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) {
    const std::int64_t kg = g_.k / g_.groups;
    for_each_slab_and_group<T>(x, [&](std::int64_t m, std::int64_t row, std::int64_t group,
                                      const T* cols, std::int64_t ld) {
      gemm(g_.precision, true, false, ckk_, kg, m, T(1), cols, ld,
           dy.data<T>() + row * g_.k + group * kg, g_.k, T(1), dw.data<T>() + group * kg, g_.k);
    });
  }

  template <class T>
  void grouped_backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) {
    const std::int64_t kg = g_.k / g_.groups, per_group = g_.c / g_.groups;
    cols_x_ = nullptr;  // the buffer will hold dcols
    for_each_slab(dy.dim(0), [&](std::int64_t s0, std::int64_t s1) {
      const std::int64_t m = (s1 - s0) * pixels_;
      const T* d = dy.data<T>() + s0 * pixels_ * g_.k;
      Tensor dxs = dx.slice_batch(s0, s1);
      if (!direct_gemm_) dxs.fill_zero();
      for (std::int64_t group = 0; group < g_.groups; ++group) {
        if (direct_gemm_) {  // dx's channels of the group are the product itself
          gemm(g_.precision, false, true, m, per_group, kg, T(1), d + group * kg, g_.k,
               w.data<T>() + group * kg, g_.k, T(0), dxs.data<T>() + group * per_group, g_.c);
          continue;
        }
        T* dcols = cols<T>();
        gemm(g_.precision, false, true, m, ckk_, kg, T(1), d + group * kg, g_.k,
             w.data<T>() + group * kg, g_.k, T(0), dcols, ckk_);
        col2im_group<T>(dcols, s1 - s0, dxs, group);
      }
    });
  }

  // Group g's columns of x (NHWC): a row per output pixel, (ky, kx, c) with c its C/G channels.
  template <class T>
  void im2col_group(const Tensor& x, std::int64_t group) {
    const T* xp = x.data<T>();
    T* cols = this->cols<T>();
    const Dims d(g_);
    const std::int64_t per_group = d.c / g_.groups, c0 = group * per_group, ckk = ckk_;
    parallel_for(x.dim(0) * d.ho, 16, [=](std::int64_t line) {  // line = (n, oy)
      const std::int64_t n = line / d.ho, oy = line % d.ho;
      for (std::int64_t ox = 0; ox < d.wo; ++ox) {
        T* row = cols + (line * d.wo + ox) * ckk;
        for (std::int64_t ky = 0; ky < d.kh; ++ky) {
          const std::int64_t iy = oy * d.sh - d.ph + ky * d.dh;
          for (std::int64_t kx = 0; kx < d.kw; ++kx) {
            const std::int64_t ix = ox * d.sw - d.pw + kx * d.dw;
            T* out = row + (ky * d.kw + kx) * per_group;
            if (iy < 0 || iy >= d.h || ix < 0 || ix >= d.w) {
              std::fill(out, out + per_group, T(0));
            } else {
              const T* src = xp + ((n * d.h + iy) * d.w + ix) * d.c + c0;
              std::copy(src, src + per_group, out);
            }
          }
        }
      }
    });
  }

  // The adjoint of im2col_group: group g's columns added into its channels of dx.
  template <class T>
  void col2im_group(const T* dcols, std::int64_t n, Tensor& dx, std::int64_t group) {
    T* dxp = dx.data<T>();
    const Dims d(g_);
    const std::int64_t per_group = d.c / g_.groups, c0 = group * per_group, ckk = ckk_,
                       pixels = pixels_;
    parallel_for(n, 1, [=](std::int64_t s) {  // one sample per thread: no two threads add to one dx
      for (std::int64_t oy = 0; oy < d.ho; ++oy)
        for (std::int64_t ox = 0; ox < d.wo; ++ox) {
          const T* row = dcols + (s * pixels + oy * d.wo + ox) * ckk;
          for (std::int64_t ky = 0; ky < d.kh; ++ky) {
            const std::int64_t iy = oy * d.sh - d.ph + ky * d.dh;
            if (iy < 0 || iy >= d.h) continue;
            for (std::int64_t kx = 0; kx < d.kw; ++kx) {
              const std::int64_t ix = ox * d.sw - d.pw + kx * d.dw;
              if (ix < 0 || ix >= d.w) continue;
              T* dst = dxp + ((s * d.h + iy) * d.w + ix) * d.c + c0;
              const T* src = row + (ky * d.kw + kx) * per_group;
              for (std::int64_t i = 0; i < per_group; ++i) dst[i] += src[i];
            }
          }
        }
    });
  }

  // f(s0, s1) for consecutive slabs [s0, s1) of a batch of n samples.
  template <class F>
  void for_each_slab(std::int64_t n, F&& f) const {
    for (std::int64_t s0 = 0; s0 < n; s0 += slab_) f(s0, std::min(n, s0 + slab_));
  }
  template <class F>
  void for_each_slab_reversed(std::int64_t n, F&& f) const {
    for (std::int64_t s0 = (n - 1) / slab_ * slab_; s0 >= 0; s0 -= slab_)
      f(s0, std::min(n, s0 + slab_));
  }

  // dy [n, K, HoWo] -> t [K, n*HoWo]
  template <class T>
  const T* dy_as_km(const Tensor& dy) {
    const std::int64_t n = dy.dim(0), m = n * pixels_;
    const T* d = dy.data<T>();
    T* t = slice<T>(memory_, t_at_);
    parallel_for(n * g_.k, 64, [&](std::int64_t plane) {
      const std::int64_t s = plane / g_.k, k = plane % g_.k;
      std::memcpy(t + k * m + s * pixels_, d + plane * pixels_,
                  sizeof(T) * static_cast<std::size_t>(pixels_));
    });
    return t;
  }

  // One row of cols per output pixel. With unit dilation along W, the KW*C values one kernel row
  // reads are contiguous in NHWC: one copy per (pixel, ky) when the row lies inside the image.
  template <class T>
  void im2col_nhwc(const Tensor& x) {
    with_span<T>([&](auto span_tag) { im2col_nhwc_span<T, decltype(span_tag)::value>(x); });
  }
  template <class T>
  void col2im_nhwc(const T* dcols, std::int64_t n, Tensor& dx) {
    with_span<T>(
        [&](auto span_tag) { col2im_nhwc_span<T, decltype(span_tag)::value>(dcols, n, dx); });
  }

  // Calls f(std::integral_constant<int, S>) with S = KW*C when that is a short length the loops
  // below should know at compile time (their copies become a few vector moves), else S = 0.
  template <class T, class F>
  void with_span(F&& f) const {
    if (g_.dilation_w == 1) {
      switch (g_.kw * g_.c) {
        case 1:
          return f(std::integral_constant<int, 1>{});
        case 3:
          return f(std::integral_constant<int, 3>{});
        case 5:
          return f(std::integral_constant<int, 5>{});
        case 6:
          return f(std::integral_constant<int, 6>{});
        case 9:
          return f(std::integral_constant<int, 9>{});
        case 12:
          return f(std::integral_constant<int, 12>{});
        case 15:
          return f(std::integral_constant<int, 15>{});
        case 24:
          return f(std::integral_constant<int, 24>{});
        case 48:
          return f(std::integral_constant<int, 48>{});
        default:
          break;
      }
    }
    f(std::integral_constant<int, 0>{});
  }

  // One row of cols per output pixel. With unit dilation along W, the KW*C values one kernel row
  // reads are contiguous in NHWC: one copy of SPAN (= KW*C, 0: not known at compile time) values
  // per (pixel, ky) when the row lies inside the image.
  template <class T, int SPAN>
  void im2col_nhwc_span(const Tensor& x) {
    const T* xp = x.data<T>();
    T* cols = this->cols<T>();
    const Dims d(g_);
    const std::int64_t c = d.c, span = SPAN ? SPAN : d.kw * c, ckk = ckk_;
    parallel_for(x.dim(0) * d.ho, 16, [=](std::int64_t line) {  // line = (n, oy)
      const std::int64_t n = line / d.ho, oy = line % d.ho;
      for (std::int64_t ox = 0; ox < d.wo; ++ox) {
        T* row = cols + (line * d.wo + ox) * ckk;
        const std::int64_t ix0 = ox * d.sw - d.pw;
        const bool inside_w = SPAN && ix0 >= 0 && ix0 + d.kw <= d.w;
        for (std::int64_t ky = 0; ky < d.kh; ++ky) {
          const std::int64_t iy = oy * d.sh - d.ph + ky * d.dh;
          T* dst = row + ky * span;
          if (iy < 0 || iy >= d.h) {
            for (std::int64_t i = 0; i < span; ++i) dst[i] = T(0);
            continue;
          }
          const T* src_row = xp + (n * d.h + iy) * d.w * c;
          if (inside_w) {
            copy_n<SPAN>(dst, src_row + ix0 * c);
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
  template <class T, int SPAN>
  void col2im_nhwc_span(const T* dcols, std::int64_t n, Tensor& dx) {
    T* dxp = dx.data<T>();
    const Dims d(g_);
    const std::int64_t c = d.c, image = d.h * d.w * c, span = SPAN ? SPAN : d.kw * c, ckk = ckk_,
                       pixels = pixels_;
    parallel_for(n, 1, [=](std::int64_t s) {  // one sample per thread: no two threads add to one dx
      T* dxs = dxp + s * image;
      std::memset(dxs, 0, sizeof(T) * static_cast<std::size_t>(image));
      for (std::int64_t oy = 0; oy < d.ho; ++oy)
        for (std::int64_t ox = 0; ox < d.wo; ++ox) {
          const T* row = dcols + (s * pixels + oy * d.wo + ox) * ckk;
          const std::int64_t ix0 = ox * d.sw - d.pw;
          const bool inside_w = SPAN && ix0 >= 0 && ix0 + d.kw <= d.w;
          for (std::int64_t ky = 0; ky < d.kh; ++ky) {
            const std::int64_t iy = oy * d.sh - d.ph + ky * d.dh;
            if (iy < 0 || iy >= d.h) continue;
            T* dst_row = dxs + iy * d.w * c;
            const T* src = row + ky * span;
            if (inside_w) {
              add_n<SPAN>(dst_row + ix0 * c, src);
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

  template <class T>
  void im2col_nchw(const Tensor& x) {
    const T* xp = x.data<T>();
    T* cols = this->cols<T>();
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

  template <class T>
  void col2im_nchw(const T* dcols, std::int64_t n, Tensor& dx) {
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
  std::int64_t slab_bytes_, slab_ = 1;
  std::int64_t pixels_ = 0, ckk_ = 0;
  bool direct_gemm_ = false;
  std::size_t cols_at_ = 0, t_at_ = 0, workspace_bytes_ = 0;  // slices of the workspace
  std::byte* memory_ = nullptr;   // the workspace memory of the current pass
  const void* cols_x_ = nullptr;  // the x whose columns the cols slice holds
  std::int64_t cols_n_ = 0;
};

Plugin* create(const Params& p, const PluginContext&) { return new Im2col(p); }

}  // namespace

// The default algorithm: it computes every geometry.
DTNN_EXPORT_PLUGIN(.kind = "conv", .name = "i2c",
                   .description =
                       "im2col + GEMM over cache-sized slabs of the minibatch (any geometry)",
                   .parameters = R"({"slab_bytes": 268435456})",
                   .traits = R"({"default": true, "groups": true, "precisions": ["bf16", "fp16"]})",
                   .factory = create)
