// gemm: convolution as one GEMM whose A operand is read straight from the image: im2col is folded
// into the GEMM's operand reads (PyDTNN's ConvGemm idea), so no cols matrix is ever written or
// read back. NHWC, any stride, padding and dilation; up to 48 output channels per layer (wider
// layers are BLIS territory: i2c). With p = (n, oy, ox) and j = (ky, kx, c):
//   X(p, j) = xpad[base(p) + off(j)],  base(p) = ((n*Hp + oy*sh)*Wp + ox*sw)*C,
//                                       off(j) = (ky*dh*Wp + kx*dw)*C + c
//   y[p, k]   = sum_j X(p, j) w[j, k]                         (w [KH, KW, C, K] is [j, k])
//   dw[j, k] += sum_p X(p, j) dy[p, k]
//   dximg[base(p) + off(j)] += sum_k dy[p, k] w[j, k]          (the adjoint of the reads), cropped
//   to dx
// xpad is x zero-padded to Hp x Wp (x itself when the layer has no padding).
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/simd.hpp"

namespace {

using namespace dtnn;
using simd::kLanes;
using simd::rows_for;
using simd::Vec;

constexpr std::int64_t kMaxOutputChannels = 48;
constexpr std::int64_t kChunk = 256;  // pixels per reduction chunk of backward_filter

class GemmConv final : public ConvAlgorithm {
 public:
  std::string name() const override { return "gemm"; }

  bool supports(const ConvGeometry& g, ConvPass, std::string& why_not) const override {
    if (g.layout != Layout::nhwc) {
      why_not = "NHWC only";
      return false;
    }
    if (g.k > kMaxOutputChannels) {
      why_not = "more than " + std::to_string(kMaxOutputChannels) + " output channels";
      return false;
    }
    return true;
  }

  void prepare(const ConvGeometry& g) override {
    g_ = g;
    hp_ = g.h + 2 * g.pad_h;
    wp_ = g.w + 2 * g.pad_w;
    padded_ = g.pad_h > 0 || g.pad_w > 0;
    ckk_ = g.kh * g.kw * g.c;
    off_.resize(static_cast<std::size_t>(ckk_));
    for (std::int64_t ky = 0, j = 0; ky < g.kh; ++ky)
      for (std::int64_t kx = 0; kx < g.kw; ++kx)
        for (std::int64_t c = 0; c < g.c; ++c, ++j)
          off_[static_cast<std::size_t>(j)] =
              (ky * g.dilation_h * wp_ + kx * g.dilation_w) * g.c + c;
    const std::int64_t lanes = dtype_size(g.dtype) == 4 ? 8 : 4;
    const std::int64_t width = (g.k + lanes - 1) / lanes * lanes;  // K padded to whole vectors
    threads_ = std::max(1, omp_get_max_threads());
    auto buffer = [&](std::int64_t n) {
      return Tensor::empty(Shape{std::max<std::int64_t>(n, 1)}, g.dtype);
    };
    packed_w_ = buffer(ckk_ * width);
    packed_wt_ = buffer(g.kh * g.k * 32);  // per kernel row, w^T padded to at most 32 lanes
    partial_ = buffer(threads_ * (ckk_ + 8) * width);
    packed_dy_ = buffer(threads_ * kChunk * width);
    bases_.assign(static_cast<std::size_t>(threads_ * kChunk), 0);
    if (padded_) xpad_ = Tensor::zeros(Shape{g.n * hp_ * wp_ * g.c}, g.dtype);
    dximg_ = buffer(g.n * image_stride());
  }

  std::size_t workspace_bytes() const override {
    std::size_t b = packed_w_.bytes() + packed_wt_.bytes() + partial_.bytes() + packed_dy_.bytes();
    return b + dximg_.bytes() + (padded_ ? xpad_.bytes() : 0);
  }

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      with_width<decltype(z)>(
          [&](auto nv) { forward_t<decltype(z), decltype(nv)::value>(x, w, y); });
    });
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      with_width<decltype(z)>(
          [&](auto nv) { filter_t<decltype(z), decltype(nv)::value>(x, dy, dw); });
    });
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    dispatch_dtype(dy.dtype(), [&](auto z) { data_t<decltype(z)>(dy, w, dx); });
  }

 private:
  // f(integral_constant<int, NV>) with NV the vectors that hold K output channels.
  template <class T, class F>
  void with_width(F&& f) const {
    const std::int64_t nv = (g_.k + kLanes<T> - 1) / kLanes<T>;
    if (nv <= 1) return f(std::integral_constant<int, 1>{});
    if (nv <= 2) return f(std::integral_constant<int, 2>{});
    if (nv <= 4) return f(std::integral_constant<int, 4>{});
    if (nv <= 6) return f(std::integral_constant<int, 6>{});
    f(std::integral_constant<int, 12>{});
  }

  // The image the GEMM reads: x, or x copied into the interior of the zero-padded xpad.
  template <class T>
  const T* padded_input(const Tensor& x) {
    if (!padded_) return x.data<T>();
    const std::int64_t c = g_.c, row = g_.w * c;
    const T* src = x.data<T>();
    T* dst = xpad_.data<T>();  // borders were zeroed once and are never written
    parallel_for(x.dim(0) * g_.h, 64, [&](std::int64_t line) {
      const std::int64_t n = line / g_.h, iy = line % g_.h;
      std::memcpy(dst + ((n * hp_ + iy + g_.pad_h) * wp_ + g_.pad_w) * c, src + line * row,
                  sizeof(T) * static_cast<std::size_t>(row));
    });
    return dst;
  }

  std::int64_t base_of(std::int64_t p) const {  // p = (n, oy, ox)
    const std::int64_t pixels = g_.ho() * g_.wo(), n = p / pixels, oy = (p % pixels) / g_.wo(),
                       ox = p % g_.wo();
    return ((n * hp_ + oy * g_.stride_h) * wp_ + ox * g_.stride_w) * g_.c;
  }

  template <class T, int NV>
  const T* pack_weights(const Tensor& w) {  // w [j, K] -> [j, W], zero-padded
    constexpr int W = NV * kLanes<T>;
    T* p = packed_w_.data<T>();
    const T* src = w.data<T>();
    for (std::int64_t j = 0; j < ckk_; ++j)
      for (std::int64_t k = 0; k < W; ++k) p[j * W + k] = k < g_.k ? src[j * g_.k + k] : T(0);
    return p;
  }

  template <class T, int NV, int R>
  static void store_rows(const Vec<T> (&acc)[R][NV], std::int64_t rows, std::int64_t k, T* y,
                         std::int64_t ldy) {
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* lanes = reinterpret_cast<const T*>(&acc[r][0]);
      std::int64_t j = 0;
      for (; j + kLanes<T> <= k; j += kLanes<T>)
        simd::store(y + r * ldy + j, acc[r][j / kLanes<T>]);
      for (; j < k; ++j) y[r * ldy + j] = lanes[j];
    }
  }

  // y[p, :] = sum_j X(p, j) w[j, :], R pixels per register block.
  template <class T, int NV>
  void forward_t(const Tensor& x, const Tensor& w, Tensor& y) {
    constexpr int W = NV * kLanes<T>, R = rows_for(NV);
    const T* xp = padded_input<T>(x);
    const T* pw = pack_weights<T, NV>(w);
    T* yp = y.data<T>();
    const std::int64_t m = x.dim(0) * g_.ho() * g_.wo(), blocks = (m + R - 1) / R, k = g_.k,
                       ckk = ckk_;
    const std::int64_t* off = off_.data();
    parallel_for(blocks, 2, [&](std::int64_t blk) {
      const std::int64_t p0 = blk * R, rows = std::min<std::int64_t>(R, m - p0);
      // Pixel r of the block reads at row0 + delta[r] + off[j]: one load per multiply-add.
      const std::int64_t base0 = base_of(p0);
      const T* row0 = xp + base0;
      std::int64_t delta[R];
      for (int r = 0; r < R; ++r)
        delta[r] = base_of(p0 + std::min<std::int64_t>(r, rows - 1)) - base0;
      Vec<T> acc[R][NV] = {};
      for (std::int64_t j = 0; j < ckk; ++j) {
        const T* at = row0 + off[j];
        Vec<T> bv[NV];
        for (int v = 0; v < NV; ++v) bv[v] = simd::load(pw + j * W + v * kLanes<T>);
        for (int r = 0; r < R; ++r) {
          const T a = at[delta[r]];
          for (int v = 0; v < NV; ++v) acc[r][v] += a * bv[v];
        }
      }
      store_rows<T, NV, R>(acc, rows, k, yp + p0 * k, k);
    });
  }

  // dw[j, :] += sum_p X(p, j) dy[p, :]: pixels split across threads, each summing into its own
  // partial; inside, chunks of pixels stay in L1 while every block of R rows of dw passes.
  template <class T, int NV>
  void filter_t(const Tensor& x, const Tensor& dy, Tensor& dw) {
    constexpr int W = NV * kLanes<T>, R = rows_for(NV);
    const T* xp = padded_input<T>(x);
    const std::int64_t m = x.dim(0) * g_.ho() * g_.wo(), k = g_.k, ckk = ckk_, rows_pad = ckk_ + 8;
    const int threads = std::min(threads_, m * ckk > 32768 ? omp_get_max_threads() : 1);
    const T* dyp = dy.data<T>();
    const std::int64_t* off = off_.data();
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      auto* sums = reinterpret_cast<Vec<T>*>(partial_.data<T>() + t * rows_pad * W);
      std::fill(sums, sums + rows_pad * NV, Vec<T>{});
      T* dyc = packed_dy_.data<T>() + t * kChunk * W;
      std::int64_t* bases = bases_.data() + t * kChunk;
      const std::int64_t p_begin = m * t / threads, p_end = m * (t + 1) / threads;
      for (std::int64_t c0 = p_begin; c0 < p_end; c0 += kChunk) {
        const std::int64_t len = std::min(p_end, c0 + kChunk) - c0;
        for (std::int64_t q = 0; q < len; ++q) {
          bases[q] = base_of(c0 + q);
          for (std::int64_t kk = 0; kk < W; ++kk)
            dyc[q * W + kk] = kk < k ? dyp[(c0 + q) * k + kk] : T(0);
        }
        for (std::int64_t i0 = 0; i0 < ckk;
             i0 += R) {  // rows past ckk read off[] padding: see below
          Vec<T> acc[R][NV];
          for (int r = 0; r < R; ++r)
            for (int v = 0; v < NV; ++v) acc[r][v] = sums[(i0 + r) * NV + v];
          std::int64_t o[R];
          for (int r = 0; r < R; ++r) o[r] = off[std::min<std::int64_t>(i0 + r, ckk - 1)];
          for (std::int64_t q = 0; q < len; ++q) {
            const T* px = xp + bases[q];
            Vec<T> bv[NV];
            for (int v = 0; v < NV; ++v) bv[v] = simd::load(dyc + q * W + v * kLanes<T>);
            for (int r = 0; r < R; ++r) {
              const T a = px[o[r]];
              for (int v = 0; v < NV; ++v) acc[r][v] += a * bv[v];
            }
          }
          for (int r = 0; r < R; ++r)
            for (int v = 0; v < NV; ++v) sums[(i0 + r) * NV + v] = acc[r][v];
        }
      }
    }
    T* dwp = dw.data<T>();
    const T* part = partial_.data<T>();
    for (std::int64_t j = 0; j < ckk; ++j)  // rows >= ckk of the partials are scratch, never summed
      for (std::int64_t kk = 0; kk < k; ++kk) {
        T s = 0;
        for (int t = 0; t < threads; ++t) s += part[(t * rows_pad + j) * W + kk];
        dwp[j * k + kk] += s;
      }
  }

  // dximg[base(p) + off(j)] += sum_k dy[p, k] w[j, k]. Samples are split across threads (a
  // sample's pixels write only its own image). With unit dilation along W, the KW*C values of one
  // kernel row ky land contiguously: they are summed in registers (R pixels at a time) and added to
  // the image with whole-vector read-modify-writes. Lanes past KW*C carry zeros (w^T is padded),
  // so writing them is harmless: every image has kLanes of slack after it.
  template <class T>
  void data_t(const Tensor& dy, const Tensor& w, Tensor& dx) {
    if (g_.dilation_w != 1) return data_scalar_t<T>(dy, w, dx);
    const std::int64_t span = g_.kw * g_.c;
    if (span <= 8) return data_span_t<T, 8 / kLanes<T>>(dy, w, dx);
    if (span <= 16) return data_span_t<T, 16 / kLanes<T>>(dy, w, dx);
    if (span <= 32) return data_span_t<T, 32 / kLanes<T>>(dy, w, dx);
    data_scalar_t<T>(dy, w, dx);
  }

  // w [KH, KW*C, K] -> wt [KH][K][S]: per kernel row, w^T with rows zero-padded to S lanes.
  template <class T>
  const T* pack_wt(const Tensor& w, std::int64_t s_width) {
    const std::int64_t span = g_.kw * g_.c, k = g_.k;
    T* wt = packed_wt_.data<T>();
    const T* src = w.data<T>();
    for (std::int64_t ky = 0; ky < g_.kh; ++ky)
      for (std::int64_t kk = 0; kk < k; ++kk)
        for (std::int64_t j = 0; j < s_width; ++j)
          wt[(ky * k + kk) * s_width + j] = j < span ? src[(ky * span + j) * k + kk] : T(0);
    return wt;
  }

  template <class T, int NV>
  void data_span_t(const Tensor& dy, const Tensor& w, Tensor& dx) {
    constexpr int S = NV * kLanes<T>, R = 6;
    const std::int64_t n = dy.dim(0), k = g_.k, pixels = g_.ho() * g_.wo();
    const std::int64_t row_step = g_.dilation_h * wp_ * g_.c, stride = image_stride();
    const std::int64_t gap =
        std::min<std::int64_t>(R, (S + g_.stride_w * g_.c - 1) / (g_.stride_w * g_.c));
    const T* wt = pack_wt<T>(w, S);
    const T* dyp = dy.data<T>();
    T* images = dximg_.data<T>();
    parallel_for(n, 1, [&](std::int64_t s) {
      T* img = images + s * stride;
      std::memset(img, 0, sizeof(T) * static_cast<std::size_t>(stride));
      const std::int64_t sample_base = s * hp_ * wp_ * g_.c;
      for (std::int64_t p0 = s * pixels; p0 < (s + 1) * pixels; p0 += R) {
        const std::int64_t rows = std::min<std::int64_t>(R, (s + 1) * pixels - p0);
        std::int64_t base[R];
        T a[R][64];  // dy rows of the block (K <= 48)
        for (int r = 0; r < R; ++r) {
          const std::int64_t p = p0 + std::min<std::int64_t>(r, rows - 1);
          base[r] = base_of(p) - sample_base;
          for (std::int64_t kk = 0; kk < k; ++kk) a[r][kk] = r < rows ? dyp[p * k + kk] : T(0);
        }
        for (std::int64_t ky = 0; ky < g_.kh; ++ky) {
          Vec<T> acc[R][NV] = {};
          const T* wk = wt + ky * k * S;
          for (std::int64_t kk = 0; kk < k; ++kk) {
            Vec<T> bv[NV];
            for (int v = 0; v < NV; ++v) bv[v] = simd::load(wk + kk * S + v * kLanes<T>);
            for (int r = 0; r < R; ++r)
              for (int v = 0; v < NV; ++v) acc[r][v] += a[r][kk] * bv[v];
          }
          // Neighbouring pixels' spans overlap; visiting them `gap` apart keeps a read-modify-write
          // from reading the span the previous one is still storing (a store-forwarding stall).
          for (std::int64_t first = 0; first < gap; ++first)
            for (std::int64_t r = first; r < rows; r += gap) {
              T* dst = img + base[r] + ky * row_step;
              for (int v = 0; v < NV; ++v)
                simd::store(dst + v * kLanes<T>, simd::load(dst + v * kLanes<T>) + acc[r][v]);
            }
        }
      }
    });
    crop<T>(dx);
  }

  // Any dilation: scatter each of the KH*KW*C values on its own.
  template <class T>
  void data_scalar_t(const Tensor& dy, const Tensor& w, Tensor& dx) {
    const std::int64_t n = dy.dim(0), k = g_.k, ckk = ckk_, pixels = g_.ho() * g_.wo(),
                       stride = image_stride();
    const T* wsrc = w.data<T>();
    const T* dyp = dy.data<T>();
    const std::int64_t* off = off_.data();
    T* images = dximg_.data<T>();
    parallel_for(n, 1, [&](std::int64_t s) {
      T* img = images + s * stride;
      std::memset(img, 0, sizeof(T) * static_cast<std::size_t>(stride));
      for (std::int64_t p = s * pixels; p < (s + 1) * pixels; ++p) {
        T* at = img + base_of(p) - s * hp_ * wp_ * g_.c;
        for (std::int64_t j = 0; j < ckk; ++j) {
          T sum = 0;
          for (std::int64_t kk = 0; kk < k; ++kk) sum += dyp[p * k + kk] * wsrc[j * k + kk];
          at[off[j]] += sum;
        }
      }
    });
    crop<T>(dx);
  }

  std::int64_t image_stride() const {
    return hp_ * wp_ * g_.c + 8;
  }  // + slack for whole-vector writes

  // dx = the interior of each padded image.
  template <class T>
  void crop(Tensor& dx) const {
    const std::int64_t c = g_.c, row = g_.w * c, stride = image_stride();
    const T* images = dximg_.data<T>();
    T* dxp = dx.data<T>();
    parallel_for(dx.dim(0) * g_.h, 64, [&](std::int64_t line) {
      const std::int64_t s = line / g_.h, iy = line % g_.h;
      std::memcpy(dxp + line * row, images + s * stride + ((iy + g_.pad_h) * wp_ + g_.pad_w) * c,
                  sizeof(T) * static_cast<std::size_t>(row));
    });
  }

  ConvGeometry g_;
  std::int64_t hp_ = 0, wp_ = 0, ckk_ = 0;
  bool padded_ = false;
  int threads_ = 1;
  std::vector<std::int64_t> off_, bases_;
  Tensor packed_w_, packed_wt_, partial_, packed_dy_, xpad_, dximg_;
};

Plugin* create(const Params&, const PluginContext&) { return new GemmConv(); }

}  // namespace

DTNN_PLUGIN(
    "conv", "gemm",
    "im2col folded into the GEMM's operand reads: no cols buffer (NHWC, up to 48 output channels)",
    "{}", create)
