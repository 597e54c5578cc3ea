// implicit_gemm (formerly gemm, still accepted by that name): convolution as an implicit GEMM on
// BLIS's micro-kernel (implicit_gemm.hpp), PyDTNN's
// ConvGemm idea: the im2col transform is done while packing the GEMM's operands, so no column
// matrix is ever materialised; the workspace is BLIS-sized packing buffers. Any geometry, NHWC
// and NCHW, float32 and float64. A tap t = (ky, kx); the inner index of each product runs over
// (tap, channel), channels innermost:
//   forward          y [p = (n,oy,ox), k] = sum_(t,c)  x(n, oy*sh - ph + ky*dh, ..., c) w(t, c, k)
//   backward-data    dx[q = (n,iy,ix), c] = sum_(t,k)  dy(n, oy, ox, k) w(t, c, k)
//                    where oy*sh = iy + ph - ky*dh (the taps with no such oy contribute zero)
//   backward-filter  dw[(t, c), k]       += sum_p      x(n, oy*sh - ph + ky*dh, ..., c) dy(p, k)
// Backward-data is gathered, never scattered (no col2im, no races between threads), one stride
// phase of dx at a time with only the taps that reach that phase (no products of zeros).
// A 1x1, stride 1, unpadded NHWC layer has nothing to transform: its three products are plain
// GEMMs on the tensors themselves, handed to BLIS whole (no workspace at all). Products at most 32
// deep (a 3-channel stem's 27 (tap, c) values, a strided 1x1 layer's channels) go in blocks of
// pixel rows to dtnn::gemm's small kernels instead (forward_shallow).
#include <algorithm>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/error.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/simd.hpp"
#include "implicit_gemm.hpp"

namespace {

using namespace dtnn;
namespace ig = dtnn::implicit_gemm;

// An activation: element (n, y, x, c) at data[n*s.n + y*s.y + x*s.x + c*s.c].
template <class T>
struct Image {
  const T* data;
  ActivationStrides s;
  std::int64_t h, w;
};

// The pixels one implicit GEMM computes: point (a, b) of an h x w grid per sample is pixel
// (y0 + a*sy, x0 + b*sx) of the image. Forward and stride-1 backward-data: the whole image, steps
// of 1; strided backward-data: one stride phase of dx at a time.
struct PixelGrid {
  std::int64_t h, w, y0 = 0, x0 = 0, sy = 1, sx = 1;
};

// Zeros for a channel run that reads padding.
inline constexpr std::int64_t kZeroRunLength = 4096;
template <class T>
alignas(64) inline constexpr T kZeroRun[kZeroRunLength] = {};

// Copies count channels starting at src (stride cs) to dst (stride ds), or zeros when src is null.
template <class T>
inline void copy_run(const T* src, std::int64_t cs, T* dst, std::int64_t ds, std::int64_t count) {
  if (src) return copy_strided(src, cs, dst, ds, count);  // (copy_short for unit strides)
  if (ds == 1) return (void)std::fill_n(dst, count, T(0));
  for (std::int64_t i = 0; i < count; ++i) dst[i * ds] = T(0);
}

// Its paths, each forced by a parameter so that the conformance sweep reaches it:
//   pointwise      plain BLIS GEMMs on the tensors (1x1 stride-1 unpadded NHWC)     path auto
//   shallow        blocks of pixel rows to dtnn::gemm's small kernels (NHWC)         path shallow
//   micro-kernel   Goto's loops around BLIS's micro-kernel, im2col while packing     path
//   microkernel split filter   backward-filter's pixels split between the threads (small dws)
//   split_filter
// "auto" picks per layer, as described above.
class GemmConv final : public ConvAlgorithm {
 public:
  explicit GemmConv(const Params& p)
      : path_(p.get_string("path")), split_filter_choice_(p.get_string("split_filter")) {
    if (path_ != "auto" && path_ != "microkernel" && path_ != "shallow")
      p.fail("path", "\"auto\", \"microkernel\" or \"shallow\" (NHWC only)");
    if (split_filter_choice_ != "auto" && split_filter_choice_ != "never")
      p.fail("split_filter", "\"auto\" or \"never\"");
  }
  std::string name() const override { return "implicit_gemm"; }

  bool supports(const ConvGeometry& g, ConvPass, std::string& why_not) const override {
    if (g.groups != 1) {
      why_not = "no grouped convolutions";
      return false;
    }
    if (path_ == "shallow" && g.layout != Layout::nhwc) {
      why_not = "path \"shallow\" is for NHWC only";
      return false;
    }
    return true;
  }

  void prepare(const ConvGeometry& g) override {
    g_ = g;
    pointwise_ = path_ == "auto" && g.layout == Layout::nhwc && g.kh == 1 && g.kw == 1 &&
                 g.stride_h == 1 && g.stride_w == 1 && g.pad_h == 0 && g.pad_w == 0;
    workspace_bytes_ = 0;
    if (pointwise_) return;
    // Every tap, and for backward-data the taps that reach each stride phase (ry, rx) of dx:
    // those with (ry + pad - ky*dil) divisible by the stride (likewise in x).
    all_taps_.resize(static_cast<std::size_t>(g.kh * g.kw));
    tap_reach_.resize(all_taps_.size());
    for (std::int64_t t = 0; t < g.kh * g.kw; ++t) {
      all_taps_[static_cast<std::size_t>(t)] = t;
      tap_reach_[static_cast<std::size_t>(t)] = {t / g.kw * g.dilation_h - g.pad_h,
                                                 t % g.kw * g.dilation_w - g.pad_w};
    }
    // The output pixels whose receptive field lies inside x, and where in x its taps are.
    const ActivationStrides xs = activation_strides(g.layout, g.h, g.w, g.c);
    auto first_inside = [](std::int64_t pad, std::int64_t stride) {
      return (pad + stride - 1) / stride;
    };
    auto end_inside = [](std::int64_t size, std::int64_t pad, std::int64_t reach,
                         std::int64_t stride) {
      const std::int64_t last = size - 1 + pad - reach;  // the last oy*stride inside
      return last < 0 ? std::int64_t(0) : last / stride + 1;
    };
    inside_ = {first_inside(g.pad_h, g.stride_h),
               end_inside(g.h, g.pad_h, (g.kh - 1) * g.dilation_h, g.stride_h),
               first_inside(g.pad_w, g.stride_w),
               end_inside(g.w, g.pad_w, (g.kw - 1) * g.dilation_w, g.stride_w)};
    tap_offsets_.clear();
    for (const TapReach& t : tap_reach_) tap_offsets_.push_back(t.y * xs.y + t.x * xs.x);
    tap_runs_.clear();
    for (std::int64_t t = 0; t < g.kh * g.kw; ++t) {
      const std::int64_t offset = tap_offsets_[static_cast<std::size_t>(t)];
      if (!tap_runs_.empty() && tap_runs_.back().offset + tap_runs_.back().count == offset)
        tap_runs_.back().count += g.c;
      else
        tap_runs_.push_back({offset, t * g.c, g.c});
    }
    phase_taps_.assign(static_cast<std::size_t>(g.stride_h * g.stride_w), {});
    for (std::int64_t ry = 0; ry < g.stride_h; ++ry)
      for (std::int64_t rx = 0; rx < g.stride_w; ++rx)
        for (std::int64_t t = 0; t < g.kh * g.kw; ++t) {
          const std::int64_t ty = ry + g.pad_h - t / g.kw * g.dilation_h;
          const std::int64_t tx = rx + g.pad_w - t % g.kw * g.dilation_w;
          auto divides = [](std::int64_t v, std::int64_t s) { return ((v % s) + s) % s == 0; };
          if (divides(ty, g.stride_h) && divides(tx, g.stride_w))
            phase_taps_[static_cast<std::size_t>(ry * g.stride_w + rx)].push_back(t);
        }
    dispatch_dtype(g.dtype, [&](auto z) {
      using T = decltype(z);
      const auto kr = ig::Kernel<T>::query(g_.precision);
      if (!kr.fits())
        throw Error("conv 'implicit_gemm': BLIS micro-kernel " + std::to_string(kr.mr) + "x" +
                    std::to_string(kr.nr) + " with MC " + std::to_string(kr.mc) +
                    " is larger than the " + std::to_string(ig::kMaxMr) + "x" +
                    std::to_string(ig::kMaxNr) + " and MC " + std::to_string(ig::kMaxMc) +
                    " this plugin handles");
      const std::int64_t threads = std::max(1, omp_get_max_threads());
      const std::int64_t taps = g.kh * g.kw, taps_c = taps * g.c;
      const std::int64_t pixels = g.n * g.ho() * g.wo(), input_pixels = g.n * g.h * g.w;
      // Backward-filter splits the pixels between the threads when each can hold a dw of its own.
      const std::int64_t dw_size = taps_c * g.k;
      split_filter_ =
          split_filter_choice_ == "auto" && threads > 1 && threads * dw_size <= kSplitLimit;
      // Split, it multiplies dw^T = dy^T im2col (the image's values NR at a time) where that packs
      // fewer panels per pixel than dw = im2col^T dy (a 3x3 layer's taps x C against K).
      auto count = [](std::int64_t n, std::int64_t width) { return (n + width - 1) / width; };
      filter_transposed_ = split_filter_ && count(g.k, kr.mr) + count(taps_c, kr.nr) <=
                                                count(taps_c, kr.mr) + count(g.k, kr.nr);
      const std::int64_t filter_m = filter_transposed_ ? g.k : taps_c;
      const std::int64_t filter_n = filter_transposed_ ? taps_c : g.k;
      // A blocks per thread and the shared B panel: forward, backward-data, backward-filter.
      WorkspaceSlices slices;
      a_at_ = slices.add<T>(
          threads * std::max({kr.a_buffer(pixels, taps_c), kr.a_buffer(input_pixels, taps * g.k),
                              kr.a_buffer(filter_m, pixels)}));
      b_at_ = slices.add<T>(std::max({kr.b_buffer(g.k, taps_c), kr.b_buffer(g.c, taps * g.k),
                                      split_filter_ ? 0 : kr.b_buffer(filter_n, pixels)}));
      if (split_filter_) {
        split_b_at_ = slices.add<T>(threads * kr.b_buffer(filter_n, pixels));
        split_c_at_ = slices.add<T>(threads * dw_size);
      }
      // Shallow products (see forward_shallow): rows of pixels, and a dw per thread.
      const bool nhwc = g.layout == Layout::nhwc;
      shallow_ = path_ == "shallow" ||
                 (path_ == "auto" && nhwc && (taps_c <= kShallowDepth || g.k <= kNarrowWidth));
      shallow_data_ =
          path_ == "shallow" ||
          (path_ == "auto" && nhwc &&
           (taps * g.k <= kShallowDepth || (g.c <= kNarrowWidth && taps * g.k <= kNarrowDepth)));
      shallow_row_ = std::max(shallow_ ? taps_c : 0, shallow_data_ ? g.c + taps * g.k : 0);
      if (shallow_row_ > 0) rows_at_ = slices.add<T>(threads * kShallowRows * shallow_row_);
      if (shallow_data_) data_filter_at_ = slices.add<T>(taps * g.k * g.c);
      if (shallow_ && threads > 1) dws_at_ = slices.add<T>(threads * dw_size);
      workspace_bytes_ = slices.bytes();
    });
    workspace().reserve(workspace_bytes_);
  }

  std::size_t workspace_bytes() const override { return workspace_bytes_; }

  // Pointwise (1x1 stride 1 NHWC) layers, with M = N*H*W pixels:
  //   y[M, K] = x[M, C] w[C, K]     dx[M, C] = dy[M, K] w^T     dw[C, K] += x^T dy
  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    dispatch_dtype(g_.dtype, [&](auto z) {
      using T = decltype(z);
      if (pointwise_)
        return gemm(g_.precision, false, false, pixels(x), g_.k, g_.c, T(1), x.data<T>(), g_.c,
                    w.data<T>(), g_.k, T(0), y.data<T>(), g_.k);
      memory_ = claim_workspace();
      if (shallow_) return forward_shallow<T>(x, w, y);
      forward_t<T>(x, w, y);
    });
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    dispatch_dtype(g_.dtype, [&](auto z) {
      using T = decltype(z);
      if (pointwise_)
        return gemm(g_.precision, false, true, pixels(dy), g_.c, g_.k, T(1), dy.data<T>(), g_.k,
                    w.data<T>(), g_.k, T(0), dx.data<T>(), g_.c);
      memory_ = claim_workspace();
      if (shallow_data_) return data_shallow<T>(dy, w, dx);
      data_t<T>(dy, w, dx);
    });
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    dispatch_dtype(g_.dtype, [&](auto z) {
      using T = decltype(z);
      if (pointwise_)
        return gemm(g_.precision, true, false, g_.c, g_.k, pixels(x), T(1), x.data<T>(), g_.c,
                    dy.data<T>(), g_.k, T(1), dw.data<T>(), g_.k);
      memory_ = claim_workspace();
      if (shallow_) return filter_shallow<T>(x, dy, dw);
      filter_t<T>(x, dy, dw);
    });
  }

 private:
  std::int64_t pixels(const Tensor& t) const { return t.dim(0) * g_.h * g_.w; }

  template <class T>
  Image<T> image(const Tensor& t, std::int64_t h, std::int64_t w, std::int64_t c) const {
    return {t.data<T>(), activation_strides(g_.layout, h, w, c), h, w};
  }

  // Where output pixel p = (n, oy, ox) reads tap t of x; null when it falls in the padding.
  template <class T>
  const T* x_at(const Image<T>& x, std::int64_t n, std::int64_t oy, std::int64_t ox,
                std::int64_t tap) const {
    const TapReach& t = tap_reach_[static_cast<std::size_t>(tap)];
    const std::int64_t iy = oy * g_.stride_h + t.y, ix = ox * g_.stride_w + t.x;
    if (iy < 0 || iy >= x.h || ix < 0 || ix >= x.w) return nullptr;
    return x.data + n * x.s.n + iy * x.s.y + ix * x.s.x;
  }

  // Where input pixel q = (n, iy, ix) reads tap t of dy; null when no output pixel reaches it.
  template <class T>
  const T* dy_at(const Image<T>& dy, std::int64_t n, std::int64_t iy, std::int64_t ix,
                 std::int64_t tap) const {
    std::int64_t oy, ox;
    if (!g_.output_reading(iy, ix, tap / g_.kw, tap % g_.kw, dy.h, dy.w, oy, ox)) return nullptr;
    return dy.data + n * dy.s.n + oy * dy.s.y + ox * dy.s.x;
  }

  // Without AVX-512 the compiler builds the 64-byte shuffles from narrower pieces: the plain loop
  // is used there. The shuffles' masks are vectors (GCC's __builtin_shuffle): clang takes the loop.
#if defined(__AVX512F__) && !defined(__clang__)
#define DTNN_GEMM_INTERLEAVE_BY_SHUFFLES 1
#endif
#ifdef DTNN_GEMM_INTERLEAVE_BY_SHUFFLES
  // interleave's 6 rows (BLIS's float MR on Zen and Haswell) for 8 columns from c: dst[k * 6 + r] =
  // src[r][c + k], three 16-float vectors each put together from the rows, two at a time, by
  // two-source shuffles (vpermt2ps with AVX-512), instead of 48 single loads and stores.
  static void interleave_6x8(const float* const* src, std::int64_t c, float* dst) {
    using V16 = simd::Vec<float, 64>;
    using Lanes = int __attribute__((vector_size(64)));
    auto pair = [&](int r) {  // rows r and r + 1: lanes 0-7 and 8-15
      return V16(__builtin_shufflevector(simd::load<float, 32>(src[r] + c),
                                         simd::load<float, 32>(src[r + 1] + c), 0, 1, 2, 3, 4, 5, 6,
                                         7, 8, 9, 10, 11, 12, 13, 14, 15));
    };
    const V16 rows01 = pair(0), rows23 = pair(2), rows45 = pair(4);
    // Output lane l of vector v holds column f / 6, row f % 6 (f = 16 v + l): row r is in pair
    // r / 2 at lane (r % 2) * 8 + column.
    auto lane = [](int v, int l) { return (16 * v + l) % 6 % 2 * 8 + (16 * v + l) / 6; };
    auto row = [](int v, int l) { return (16 * v + l) % 6; };
    for (int v = 0; v < 3; ++v) {
      Lanes first, second;
      for (int l = 0; l < 16; ++l) {
        first[l] = row(v, l) < 2 ? lane(v, l) : 16 + lane(v, l);  // rows 0-3 from rows01, rows23
        second[l] = row(v, l) < 4 ? l : 16 + lane(v, l);          // rows 4-5 from rows45
      }
      const V16 partial = __builtin_shuffle(rows01, rows23, first);
      simd::store<float, 64>(dst + 16 * v, __builtin_shuffle(partial, rows45, second));
    }
  }
#endif

  // dst[c * mr + r] = src[r][c] for c < run, r < mr: MR rows' runs side by side, column by column.
  // (MR known when compiled for the usual kernels: the rows' loop unrolls.)
  template <class T>
  static void interleave(const T* const* src, std::int64_t mr, std::int64_t run, T* dst) {
    auto fixed = [&](auto rows, std::int64_t from = 0) {  // columns [from, run)
      constexpr std::int64_t kRows = decltype(rows)::value;
      for (std::int64_t c = from; c < run; ++c, dst += kRows)
        for (std::int64_t r = 0; r < kRows; ++r) dst[r] = src[r][c];
    };
    switch (mr) {
      case 4:
        return fixed(std::integral_constant<std::int64_t, 4>{});
      case 6:
#ifdef DTNN_GEMM_INTERLEAVE_BY_SHUFFLES
        if constexpr (std::is_same_v<T, float>) {
          const std::int64_t blocked = run / 8 * 8;
          for (std::int64_t c = 0; c < blocked; c += 8, dst += 48) interleave_6x8(src, c, dst);
          return fixed(std::integral_constant<std::int64_t, 6>{}, blocked);
        }
#endif
        return fixed(std::integral_constant<std::int64_t, 6>{});
      case 8:
        return fixed(std::integral_constant<std::int64_t, 8>{});
      case 12:  // the bf16 micro-kernel's (bf16_ukr.hpp)
        return fixed(std::integral_constant<std::int64_t, 12>{});
      case 16:
        return fixed(std::integral_constant<std::int64_t, 16>{});
      default:
        for (std::int64_t c = 0; c < run; ++c, dst += mr)
          for (std::int64_t r = 0; r < mr; ++r) dst[r] = src[r][c];
    }
  }

  // pack_pixel_rows for contiguous channel runs of at most kZeroRun channels and MR whole rows, a
  // tap at a time with every row's run copied together: the panel is written in order (column by
  // column, MR values each) rather than one row at a time with stride MR. Padding reads zeros.
  // When field(n, y, x) gives where every row's receptive field starts (none reaches the padding),
  // tap ti of the list is at that start + offsets[ti] in each row, with no bounds to test.
  static constexpr std::int64_t kMaxPanelRows = 16;
  template <class T, class Source, class Field>
  static void pack_interleaved(std::int64_t i, std::int64_t mr, const PixelGrid& grid,
                               std::span<const std::int64_t> taps, std::int64_t channels,
                               std::int64_t p0, std::int64_t kc, T* panel, Source&& source,
                               Field&& field, std::span<const std::int64_t> offsets) {
    Pixel at[kMaxPanelRows];
    const T* src[kMaxPanelRows];
    bool whole = !offsets.empty();
    Pixel o = Pixel::at(i, grid.h, grid.w);
    for (std::int64_t r = 0; r < mr; ++r, o.next(grid.h, grid.w)) {
      at[r] = {o.n, grid.y0 + o.y * grid.sy, grid.x0 + o.x * grid.sx};
      if (whole) whole = (src[r] = field(at[r].n, at[r].y, at[r].x)) != nullptr;
    }
    if (whole) {
      const T* base[kMaxPanelRows];
      std::copy(src, src + mr, base);
      for (std::int64_t j = p0; j < p0 + kc;) {
        auto ti = static_cast<std::size_t>(j / channels);
        const std::int64_t c0 = j % channels, start = offsets[ti] + c0;
        std::int64_t run = std::min(channels - c0, p0 + kc - j);
        for (;
             j + run < p0 + kc && ti + 1 < taps.size() && offsets[ti + 1] == offsets[ti] + channels;
             ++ti)
          run += std::min(channels, p0 + kc - j - run);
        for (std::int64_t r = 0; r < mr; ++r) src[r] = base[r] + start;
        interleave(src, mr, run, panel + (j - p0) * mr);
        j += run;
      }
      return;
    }
    auto tap_of = [&](std::int64_t r, std::size_t ti) {
      return source(at[r].n, at[r].y, at[r].x, taps[ti]);
    };
    for (std::int64_t j = p0; j < p0 + kc;) {
      auto ti = static_cast<std::size_t>(j / channels);
      const std::int64_t c0 = j % channels;
      std::int64_t run = std::min(channels - c0, p0 + kc - j);
      bool inside = true;
      for (std::int64_t r = 0; r < mr; ++r) {
        const T* row = tap_of(r, ti);
        inside = inside && row;
        src[r] = row ? row + c0 : kZeroRun<T>;
      }
      // Taps whose runs follow on in memory in every row (NHWC neighbours along a filter row)
      // join this one: few channels (a stem's 3) still make long runs.
      while (inside && j + run < p0 + kc && ++ti < taps.size()) {
        for (std::int64_t r = 0; r < mr && inside; ++r) inside = tap_of(r, ti) == src[r] + run;
        if (inside) run += std::min(channels, p0 + kc - j - run);
      }
      interleave(src, mr, run, panel + (j - p0) * mr);
      j += run;
    }
  }

  // An MR-tall panel whose rows are the pixels of a grid and whose columns [p0, p0 + kc) are
  // (tap, channel) pairs with `channels` channels per tap of the list `taps`; source(n, y, x, tap)
  // gives the channel run (stride cs) image pixel (y, x) reads through that tap.
  template <class T, class Source, class Field>
  static void pack_pixel_rows(std::int64_t i, std::int64_t m, std::int64_t mr,
                              const PixelGrid& grid, std::span<const std::int64_t> taps,
                              std::int64_t channels, std::int64_t cs, std::int64_t p0,
                              std::int64_t kc, T* panel, Source&& source, Field&& field,
                              std::span<const std::int64_t> offsets) {
    if (cs == 1 && i + mr <= m && mr <= kMaxPanelRows && channels <= kZeroRunLength)
      return pack_interleaved(i, mr, grid, taps, channels, p0, kc, panel, source, field, offsets);
    for (std::int64_t r = 0; r < mr; ++r) {
      const std::int64_t p = i + r;
      if (p >= m) {
        for (std::int64_t q = 0; q < kc; ++q) panel[q * mr + r] = T(0);
        continue;
      }
      const Pixel o = Pixel::at(p, grid.h, grid.w);
      const std::int64_t y = grid.y0 + o.y * grid.sy, x = grid.x0 + o.x * grid.sx;
      for (std::int64_t j = p0; j < p0 + kc;) {
        std::size_t ti = static_cast<std::size_t>(j / channels);
        const std::int64_t c0 = j % channels;
        std::int64_t run = std::min(channels - c0, p0 + kc - j);
        const T* src = source(o.n, y, x, taps[ti]);
        // Taps whose channel runs follow on in memory (NHWC neighbours along a filter row) join
        // this run: one copy instead of one per tap.
        if (src && cs == 1)
          while (j + run < p0 + kc && ++ti < taps.size() &&
                 source(o.n, y, x, taps[ti]) == src + c0 + run)
            run += std::min(channels, p0 + kc - j - run);
        copy_run(src ? src + c0 * cs : nullptr, cs, panel + (j - p0) * mr + r, mr, run);
        j += run;
      }
    }
  }

  // An NR-wide panel of a filter matrix: rows [p0, p0 + kc) are (tap of the list, inner channel),
  // columns [j, j + NR) the outer channel; element (tap, inner, outer) at w[tap offset + inner*is +
  // outer*os].
  template <class T>
  void pack_filter(const T* w, std::span<const std::int64_t> taps, std::int64_t inner,
                   std::int64_t is, std::int64_t outer, std::int64_t os, std::int64_t j,
                   std::int64_t nr, std::int64_t p0, std::int64_t kc, T* panel) const {
    const std::int64_t cols = std::min(nr, outer - j);
    for (std::int64_t q = 0; q < kc; ++q)
      filter_piece(filter_row(w, taps, inner, is, p0 + q) + j * os, os, cols, nr, panel + q * nr);
  }

  // Rows [q0, q1) of every NR-wide panel of a KC x NC slice of the same filter matrix, columns
  // [jc, jc + nc), rows from p0, for a filter whose outer channels are contiguous (os 1): each row
  // read once, in order (implicit_gemm::SlicePacker).
  template <class T>
  void pack_filter_rows(const T* w, std::span<const std::int64_t> taps, std::int64_t inner,
                        std::int64_t is, std::int64_t outer, std::int64_t jc, std::int64_t nc,
                        std::int64_t nr, std::int64_t p0, std::int64_t kc, std::int64_t q0,
                        std::int64_t q1, T* slice) const {
    for (std::int64_t q = q0; q < q1; ++q) {
      const T* src = filter_row(w, taps, inner, is, p0 + q) + jc;
      for (std::int64_t jr = 0; jr < nc; jr += nr)
        filter_piece(src + jr, 1, std::min(nr, outer - jc - jr), nr, slice + jr * kc + q * nr);
    }
  }

  // Where row `row` of the filter matrix ((tap of the list, inner channel), as in pack_filter)
  // starts: its element for outer channel 0.
  template <class T>
  const T* filter_row(const T* w, std::span<const std::int64_t> taps, std::int64_t inner,
                      std::int64_t is, std::int64_t row) const {
    const FilterStrides fs = filter_strides(g_);
    const std::int64_t tap = taps[static_cast<std::size_t>(row / inner)];
    return w + tap / g_.kw * fs.y + tap % g_.kw * fs.x + row % inner * is;
  }

  // One NR-wide row of a packed panel: the cols values at src (stride os), zeros after.
  template <class T>
  static void filter_piece(const T* src, std::int64_t os, std::int64_t cols, std::int64_t nr,
                           T* dst) {
    copy_run(src, os, dst, 1, cols);
    for (std::int64_t c = cols; c < nr; ++c) dst[c] = T(0);
  }

  // out[(n, y, x), o] = sum over the listed taps and i of source(n, y, x, tap)[i * source_cs]
  // w(tap, i, o), for the pixels (y, x) of a grid over an image of height img_h and width img_w:
  // forward (inner channels C read from x, outer K, the whole Ho x Wo output) and backward-data
  // (inner K read from dy, outer C, dx or one stride phase of it). The filter element
  // (tap, i, o) is at w[tap offset + i * inner_stride + o * outer_stride].
  template <class T, class Source, class Field>
  void pixel_product(const Tensor& wt, std::span<const std::int64_t> taps, std::int64_t inner,
                     std::int64_t inner_stride, std::int64_t outer, std::int64_t outer_stride,
                     std::int64_t source_cs, std::int64_t batch, const PixelGrid& grid,
                     std::int64_t img_h, std::int64_t img_w, Tensor& out, Source&& source,
                     Field&& field, std::span<const std::int64_t> offsets) {
    const auto kr = ig::Kernel<T>::query(g_.precision);
    const std::int64_t m = batch * grid.h * grid.w;
    const T* filter = wt.data<T>();
    const ActivationStrides os = activation_strides(g_.layout, img_h, img_w, outer);
    // Where grid pixel o's output channels start in out.
    auto offset = [&](const Pixel& o) {
      return o.n * os.n + (grid.y0 + o.y * grid.sy) * os.y + (grid.x0 + o.x * grid.sx) * os.x;
    };
    auto pack_a = [&](std::int64_t i, std::int64_t p0, std::int64_t kc, T* panel) {
      pack_pixel_rows(i, m, kr.mr, grid, taps, inner, source_cs, p0, kc, panel, source, field,
                      offsets);
    };
    auto pack_b = [&](std::int64_t j, std::int64_t p0, std::int64_t kc, T* panel) {
      pack_filter(filter, taps, inner, inner_stride, outer, outer_stride, j, kr.nr, p0, kc, panel);
    };
    auto row = [&](std::int64_t p) { return offset(Pixel::at(p, grid.h, grid.w)); };
    auto col = [&](std::int64_t o) { return o * os.c; };
    // The whole image in NHWC is plain row-major: the micro-kernel writes it in place.
    const bool plain = g_.layout == Layout::nhwc && grid.h == img_h && grid.w == img_w;
    const ig::Output<T, decltype(row), decltype(col)> c{out.data<T>(), row, col, plain ? outer : 0};
    const std::int64_t depth = static_cast<std::int64_t>(taps.size()) * inner;
    if (outer_stride == 1) {
      auto pack_slice = [&](std::int64_t jc, std::int64_t nc, std::int64_t p0, std::int64_t kc,
                            std::int64_t q0, std::int64_t q1, T* slice) {
        pack_filter_rows(filter, taps, inner, inner_stride, outer, jc, nc, kr.nr, p0, kc, q0, q1,
                         slice);
      };
      ig::run<T>(kr, m, outer, depth, pack_a, ig::SlicePacker<decltype(pack_slice)>{pack_slice}, c,
                 T(0), panels<T>(a_at_), panels<T>(b_at_));
      return;
    }
    ig::run<T>(kr, m, outer, depth, pack_a, pack_b, c, T(0), panels<T>(a_at_), panels<T>(b_at_));
  }

  template <class T>
  void forward_t(const Tensor& xt, const Tensor& wt, Tensor& yt) {
    const Image<T> x = image<T>(xt, g_.h, g_.w, g_.c);
    const FilterStrides fs = filter_strides(g_);
    pixel_product<T>(
        wt, all_taps_, g_.c, fs.c, g_.k, fs.k, x.s.c, xt.dim(0), PixelGrid{g_.ho(), g_.wo()},
        g_.ho(), g_.wo(), yt,
        [&](std::int64_t n, std::int64_t oy, std::int64_t ox, std::int64_t tap) {
          return x_at(x, n, oy, ox, tap);
        },
        [&](std::int64_t n, std::int64_t oy, std::int64_t ox) { return field_start(x, n, oy, ox); },
        tap_offsets_);
  }

  // Where output pixel (n, oy, ox) starts reading x (its tap t at that + tap_offsets_[t]), or null
  // when its receptive field reaches into the padding.
  template <class T>
  const T* field_start(const Image<T>& x, std::int64_t n, std::int64_t oy, std::int64_t ox) const {
    if (oy < inside_.y0 || oy >= inside_.y1 || ox < inside_.x0 || ox >= inside_.x1) return nullptr;
    return x.data + n * x.s.n + oy * g_.stride_h * x.s.y + ox * g_.stride_w * x.s.x;
  }

  // t = 0, in chunks between the threads.
  template <class T>
  static void clear(Tensor& t) {
    T* base = t.data<T>();
    parallel_chunks(t.numel(), kParallelGrain, [&](std::int64_t begin, std::int64_t end) {
      std::fill(base + begin, base + end, T(0));
    });
  }

  // Calls phase(taps, grid) for each stride phase (ry, rx) of dx that some tap reaches: the taps
  // that reach it and the grid of its pixels (stride 1: one phase, every tap). Pixels that no tap
  // reaches (a 1x1 stride-2 layer's three other phases) are zero: dx is then cleared first, whole,
  // in slabs between the threads, rather than pixel by pixel.
  template <class T, class F>
  void for_each_phase(Tensor& dxt, F&& phase) const {
    const std::int64_t sh = g_.stride_h, sw = g_.stride_w;
    auto taps_of = [&](std::int64_t ry, std::int64_t rx) -> const std::vector<std::int64_t>& {
      return phase_taps_[static_cast<std::size_t>(ry * sw + rx)];
    };
    bool unreached = false;
    for (std::int64_t ry = 0; ry < std::min(sh, g_.h); ++ry)
      for (std::int64_t rx = 0; rx < std::min(sw, g_.w); ++rx)
        unreached = unreached || taps_of(ry, rx).empty();
    if (unreached) clear<T>(dxt);
    for (std::int64_t ry = 0; ry < std::min(sh, g_.h); ++ry)
      for (std::int64_t rx = 0; rx < std::min(sw, g_.w); ++rx)
        if (!taps_of(ry, rx).empty())
          phase(std::span<const std::int64_t>(taps_of(ry, rx)),
                PixelGrid{(g_.h - ry + sh - 1) / sh, (g_.w - rx + sw - 1) / sw, ry, rx, sh, sw});
  }

  // dx, one stride phase at a time: only the taps that reach the phase enter its GEMM, so a
  // strided layer multiplies no zeros.
  template <class T>
  void data_t(const Tensor& dyt, const Tensor& wt, Tensor& dxt) {
    const Image<T> dy = image<T>(dyt, g_.ho(), g_.wo(), g_.k);
    const FilterStrides fs = filter_strides(g_);
    for_each_phase<T>(dxt, [&](std::span<const std::int64_t> taps, const PixelGrid& grid) {
      pixel_product<T>(
          wt, taps, g_.k, fs.k, g_.c, fs.c, dy.s.c, dyt.dim(0), grid, g_.h, g_.w, dxt,
          [&](std::int64_t n, std::int64_t iy, std::int64_t ix, std::int64_t tap) {
            return dy_at(dy, n, iy, ix, tap);
          },
          [](std::int64_t, std::int64_t, std::int64_t) -> const T* { return nullptr; },
          std::span<const std::int64_t>{});
    });
  }

  // dw[(tap, c), k] += sum over pixels p of x(p through tap, c) dy(p, k): the im2col matrix of x,
  // P x (taps * C), and dy, P x K, are packed a panel at a time, the im2col matrix never stored.
  // Split between the threads over the pixels (a private dw each), the product is usually
  // dw^T = dy^T im2col: the wide operand, NR values per pixel at once, is the one gathered from the
  // image. Otherwise, and split over the rows of dw (a large dw, written in place), it is
  // dw = im2col^T dy: dw is written row-major.
  template <class T>
  void filter_t(const Tensor& xt, const Tensor& dyt, Tensor& dwt) {
    const auto kr = ig::Kernel<T>::query(g_.precision);
    const Image<T> x = image<T>(xt, g_.h, g_.w, g_.c);
    const Image<T> dy = image<T>(dyt, g_.ho(), g_.wo(), g_.k);
    const std::int64_t taps_c = g_.kh * g_.kw * g_.c, pixels = xt.dim(0) * g_.ho() * g_.wo();
    const FilterStrides fs = filter_strides(g_);
    auto filter_row = [&](std::int64_t j) {  // where (tap, c) = j starts in dw
      const std::int64_t tap = j / g_.c;
      return tap / g_.kw * fs.y + tap % g_.kw * fs.x + j % g_.c * fs.c;
    };
    auto filter_col = [&](std::int64_t k) { return k * fs.k; };
    auto pack_im2col = [&](std::int64_t width) {
      return [&, width](std::int64_t j, std::int64_t p0, std::int64_t kc, T* panel) {
        pack_im2col_panel(x, j, taps_c, width, p0, kc, panel);
      };
    };
    auto pack_dy = [&](std::int64_t width) {
      return [&, width](std::int64_t j, std::int64_t p0, std::int64_t kc, T* panel) {
        pack_dy_panel(dy, j, width, p0, kc, panel);
      };
    };
    if (filter_transposed_) {
      const ig::Output<T, decltype(filter_col), decltype(filter_row)> out{dwt.data<T>(), filter_col,
                                                                          filter_row, 0};
      ig::run_split_k<T>(kr, g_.k, taps_c, pixels, pack_dy(kr.mr), pack_im2col(kr.nr), out, T(1),
                         panels<T>(a_at_), panels<T>(split_b_at_), panels<T>(split_c_at_));
      return;
    }
    const bool nhwc = g_.layout == Layout::nhwc;
    const ig::Output<T, decltype(filter_row), decltype(filter_col)> out{
        dwt.data<T>(), filter_row, filter_col, nhwc ? g_.k : 0};
    if (split_filter_)
      ig::run_split_k<T>(kr, taps_c, g_.k, pixels, pack_im2col(kr.mr), pack_dy(kr.nr), out, T(1),
                         panels<T>(a_at_), panels<T>(split_b_at_), panels<T>(split_c_at_));
    else
      ig::run<T>(kr, taps_c, g_.k, pixels, pack_im2col(kr.mr), pack_dy(kr.nr), out, T(1),
                 panels<T>(a_at_), panels<T>(b_at_));
  }

  // Output channels [j, j + width) (zeros past K) x pixels [p0, p0 + kc) of dy:
  // panel[q * width + r] = dy(pixel p0 + q, channel j + r).
  template <class T>
  void pack_dy_panel(const Image<T>& dy, std::int64_t j, std::int64_t width, std::int64_t p0,
                     std::int64_t kc, T* panel) const {
    const std::int64_t ho = g_.ho(), wo = g_.wo(), count = std::min(width, g_.k - j);
    if (g_.layout == Layout::nhwc && count == width) {  // dy is [P, K]: the next pixel, K on
      for (std::int64_t q = 0; q < kc; ++q)
        copy_short(dy.data + (p0 + q) * g_.k + j, panel + q * width, width);
      return;
    }
    Pixel o = Pixel::at(p0, ho, wo);
    for (std::int64_t q = 0; q < kc; ++q, o.next(ho, wo)) {
      T* dst = panel + q * width;
      copy_run(dy.data + o.n * dy.s.n + o.y * dy.s.y + o.x * dy.s.x + j * dy.s.c, dy.s.c, dst, 1,
               count);
      for (std::int64_t r = count; r < width; ++r) dst[r] = T(0);
    }
  }

  // Columns [j, j + width) (zeros past `cols`) x pixels [p0, p0 + kc) of the im2col matrix of x,
  // whose column (tap, c) at output pixel p is x read by p through tap: panel[q * width + r]. A
  // panel's columns are runs of channels of at most a few taps; each run is copied for every pixel,
  // a stretch of pixels along an output row at a time (one bounds test per stretch). In NHWC
  // without dilation the next taps of a filter row read the next pixels of x, so a run carries on
  // across them (the whole panel from one place where the image has every one).
  template <class T>
  void pack_im2col_panel(const Image<T>& x, std::int64_t j0, std::int64_t cols, std::int64_t width,
                         std::int64_t p0, std::int64_t kc, T* panel) const {
    const std::int64_t ho = g_.ho(), wo = g_.wo(), sh = g_.stride_h, sw = g_.stride_w;
    const bool join_taps = g_.layout == Layout::nhwc && g_.dilation_w == 1;
    // The output columns whose tap reads inside the image: ix = ox*sw + t.x in [lo, hi).
    auto first_inside = [&](const TapReach& t) { return t.x >= 0 ? 0 : (-t.x + sw - 1) / sw; };
    auto end_inside = [&](const TapReach& t) {
      return g_.w - 1 - t.x < 0 ? 0 : (g_.w - 1 - t.x) / sw + 1;
    };
    for (std::int64_t r = 0; r < width;) {
      const std::int64_t j = j0 + r;
      if (j >= cols) {
        for (std::int64_t q = 0; q < kc; ++q)
          for (std::int64_t e = r; e < width; ++e) panel[q * width + e] = T(0);
        return;
      }
      const std::int64_t tap = j / g_.c, c0 = j % g_.c;
      std::int64_t run = std::min(g_.c - c0, width - r), last = tap;  // taps tap .. last
      if (join_taps)
        while (r + run < width && (last + 1) % g_.kw != 0 && (last + 1) * g_.c < cols) {
          ++last;
          run += std::min(g_.c, width - r - run);
        }
      const TapReach& t = tap_reach_[static_cast<std::size_t>(tap)];
      const std::int64_t lo = first_inside(t);
      const std::int64_t hi = end_inside(tap_reach_[static_cast<std::size_t>(last)]);
      Pixel o = Pixel::at(p0, ho, wo);
      for (std::int64_t q = 0; q < kc;) {
        const std::int64_t len = std::min(wo - o.x, kc - q);
        const std::int64_t iy = o.y * sh + t.y;
        T* dst = panel + q * width + r;
        const bool row_inside = iy >= 0 && iy < g_.h;
        const T* src = x.data + o.n * x.s.n + iy * x.s.y + c0 * x.s.c;
        for (std::int64_t ox = o.x; ox < o.x + len; ++ox, dst += width) {
          if (!row_inside || (ox >= lo && ox < hi) || last == tap) {
            const bool inside = row_inside && ox >= lo && ox < hi;
            copy_run(inside ? src + (ox * sw + t.x) * x.s.x : nullptr, x.s.c, dst, 1, run);
            continue;
          }
          for (std::int64_t e = 0; e < run; ++e) {  // joined taps, some outside the image
            const std::int64_t ix = ox * sw + t.x + (c0 + e) / g_.c;
            dst[e] = ix >= 0 && ix < g_.w ? src[ix * x.s.x + e - (c0 + e) / g_.c * g_.c] : T(0);
          }
        }
        q += len;
        o.x += len - 1;
        o.next(ho, wo);
      }
      r += run;
    }
  }

  // Shallow products: a stem's 27 (tap, c) values per pixel, a 1x1 layer's 16 or 32 channels.
  // BLIS's micro-kernel would be called once per 6x16 tile for a few dozen multiply-adds, and its
  // A panels, MR pixels interleaved, used by one or two tiles each. Instead each thread takes
  // blocks of kShallowRows pixels, packs each pixel's (tap, c) values side by side (row-major,
  // whole runs copied at once) and hands the block to dtnn::gemm, whose small kernels read such
  // rows as they are: the im2col of one block at a time, never of the whole batch.
  static constexpr std::int64_t kShallowDepth = 32;   // (tap, c) values per pixel at most
  static constexpr std::int64_t kNarrowDepth = 1024;  // and then dy values per pixel at most
  static constexpr std::int64_t kNarrowWidth = 8;  // or output channels (NR 16 half empty or worse)
  static constexpr std::int64_t kShallowRows = 1024;  // pixels per block

  // row[(tap, c)] = x read by output pixel o through tap (zeros in the padding).
  template <class T>
  void pack_pixel(const Image<T>& x, const Pixel& o, T* row) const {
    if (const T* base = field_start(x, o.n, o.y, o.x)) {
      for (const TapRun& run : tap_runs_) copy_short(base + run.offset, row + run.at, run.count);
      return;
    }
    for (std::int64_t t = 0; t < g_.kh * g_.kw; ++t)
      copy_run(x_at(x, o.n, o.y, o.x, t), 1, row + t * g_.c, 1, g_.c);
  }

  // rows[r] = pack_pixel of output pixels p0 + r, r < count (rows of taps x C values).
  template <class T>
  void pack_pixels(const Image<T>& x, std::int64_t p0, std::int64_t count, T* rows) const {
    const std::int64_t tc = g_.kh * g_.kw * g_.c, ho = g_.ho(), wo = g_.wo();
    Pixel o = Pixel::at(p0, ho, wo);
    for (std::int64_t r = 0; r < count; ++r, o.next(ho, wo)) pack_pixel(x, o, rows + r * tc);
  }

  // Calls block(thread, p0, count) for blocks of kShallowRows output pixels, in parallel. The
  // blocks go to threads as they come free (a thread slowed by another process does fewer), except
  // with `fixed`, for sums per thread: then each thread gets the same blocks on every call, so
  // that the sums do not vary from run to run.
  template <class F>
  void for_pixel_blocks(std::int64_t pixels, F&& block, bool fixed = false) const {
    const std::int64_t blocks = (pixels + kShallowRows - 1) / kShallowRows;
    auto run = [&](std::int64_t b) {
      block(omp_get_thread_num(), b * kShallowRows,
            std::min(kShallowRows, pixels - b * kShallowRows));
    };
    if (fixed) {
#pragma omp parallel for schedule(static) if (blocks > 1)
      for (std::int64_t b = 0; b < blocks; ++b) run(b);
      return;
    }
#pragma omp parallel for schedule(dynamic, 1) if (blocks > 1)
    for (std::int64_t b = 0; b < blocks; ++b) run(b);
  }

  // y[p, K] = rows[p, (tap, c)] w[(tap, c), K]: NHWC's filter [KH, KW, C, K] is that matrix.
  template <class T>
  void forward_shallow(const Tensor& xt, const Tensor& wt, Tensor& yt) {
    const Image<T> x = image<T>(xt, g_.h, g_.w, g_.c);
    const std::int64_t tc = g_.kh * g_.kw * g_.c, ho = g_.ho(), wo = g_.wo();
    T* y = yt.data<T>();
    for_pixel_blocks(xt.dim(0) * ho * wo, [&](int t, std::int64_t p0, std::int64_t count) {
      T* rows = panels<T>(rows_at_) + t * kShallowRows * shallow_row_;
      pack_pixels(x, p0, count, rows);
      gemm(g_.precision, false, false, count, g_.k, tc, T(1), rows, tc, wt.data<T>(), g_.k, T(0),
           y + p0 * g_.k, g_.k);
    });
  }

  // dw[(tap, c), K] += rows^T dy, a dw per thread added up at the end.
  template <class T>
  void filter_shallow(const Tensor& xt, const Tensor& dyt, Tensor& dwt) {
    const Image<T> x = image<T>(xt, g_.h, g_.w, g_.c);
    const std::int64_t tc = g_.kh * g_.kw * g_.c, ho = g_.ho(), wo = g_.wo(), size = tc * g_.k;
    const int threads = omp_get_max_threads();
    T* dws = threads > 1 ? panels<T>(dws_at_) : nullptr;
    if (dws) std::fill(dws, dws + threads * size, T(0));
    const T* dy = dyt.data<T>();
    for_pixel_blocks(
        xt.dim(0) * ho * wo,
        [&](int t, std::int64_t p0, std::int64_t count) {
          T* rows = panels<T>(rows_at_) + t * kShallowRows * shallow_row_;
          pack_pixels(x, p0, count, rows);
          gemm(g_.precision, true, false, tc, g_.k, count, T(1), rows, tc, dy + p0 * g_.k, g_.k,
               T(1), dws ? dws + t * size : dwt.data<T>(), g_.k);
        },
        /*fixed=*/true);
    if (!dws) return;
    T* dw = dwt.data<T>();
    for (int t = 0; t < threads; ++t)
      for (std::int64_t i = 0; i < size; ++i) dw[i] += dws[t * size + i];
  }

  // Backward-data with few input channels (NR 16 would be mostly empty) or a shallow product (a
  // 1x1 layer of up to 32 output channels): for each stride phase of dx, blocks of its pixels.
  // Each pixel's row holds the K values of dy it reads through each tap reaching the phase (zeros
  // where none), side by side; the block times the phase's filter matrix (row (tap, k), column c:
  // w(tap, c, k)) gives the block's dx rows, which then go to their pixels.
  template <class T>
  void data_shallow(const Tensor& dyt, const Tensor& wt, Tensor& dxt) {
    const Image<T> dy = image<T>(dyt, g_.ho(), g_.wo(), g_.k);
    const ActivationStrides s = activation_strides(g_.layout, g_.h, g_.w, g_.c);
    T* dx = dxt.data<T>();
    const T* w = wt.data<T>();
    T* filter = panels<T>(data_filter_at_);
    for_each_phase<T>(dxt, [&](std::span<const std::int64_t> taps, const PixelGrid& grid) {
      const auto n_taps = static_cast<std::int64_t>(taps.size()), depth = n_taps * g_.k;
      for (std::int64_t ti = 0; ti < n_taps; ++ti)  // NHWC's w is [tap][c][k]
        for (std::int64_t k = 0; k < g_.k; ++k)
          for (std::int64_t c = 0; c < g_.c; ++c)
            filter[(ti * g_.k + k) * g_.c + c] = w[(taps[ti] * g_.c + c) * g_.k + k];
      // Grid pixel (a, b) reads dy pixel (a + oy, b + ox) through a tap (which reaches the
      // phase, so the divisions are exact).
      auto shift = [&](std::int64_t tap) {
        return std::pair{(grid.y0 + g_.pad_h - tap / g_.kw * g_.dilation_h) / g_.stride_h,
                         (grid.x0 + g_.pad_w - tap % g_.kw * g_.dilation_w) / g_.stride_w};
      };
      for_pixel_blocks(
          dyt.dim(0) * grid.h * grid.w, [&](int t, std::int64_t p0, std::int64_t count) {
            T* rows = panels<T>(rows_at_) + t * kShallowRows * shallow_row_;
            T* dy_rows = rows + kShallowRows * g_.c;
            for (std::int64_t ti = 0; ti < n_taps; ++ti) {
              const auto [oy, ox] = shift(taps[ti]);
              Pixel o = Pixel::at(p0, grid.h, grid.w);
              for (std::int64_t r = 0; r < count; ++r, o.next(grid.h, grid.w)) {
                const std::int64_t y = o.y + oy, x = o.x + ox;
                const bool inside = y >= 0 && y < dy.h && x >= 0 && x < dy.w;
                copy_run(inside ? dy.data + o.n * dy.s.n + y * dy.s.y + x * dy.s.x : nullptr, 1,
                         dy_rows + r * depth + ti * g_.k, 1, g_.k);
              }
            }
            gemm(g_.precision, false, false, count, g_.c, depth, T(1), dy_rows, depth, filter, g_.c,
                 T(0), rows, g_.c);
            Pixel o = Pixel::at(p0, grid.h, grid.w);
            for (std::int64_t r = 0; r < count; ++r, o.next(grid.h, grid.w))
              copy_short(rows + r * g_.c,
                         dx + o.n * s.n + (grid.y0 + o.y * grid.sy) * s.y +
                             (grid.x0 + o.x * grid.sx) * s.x,
                         g_.c);
          });
    });
  }

  ConvGeometry g_;
  std::string path_;                    // the path parameter
  std::string split_filter_choice_;     // the split_filter parameter
  bool pointwise_ = false;              // 1x1 stride 1 unpadded NHWC: plain BLIS GEMMs
  std::vector<std::int64_t> all_taps_;  // 0 .. KH*KW-1
  // Where tap t = (ky, kx) reads, relative to output pixel (oy*sh, ox*sw):
  // (ky*dh - ph, kx*dw - pw).
  struct TapReach {
    std::int64_t y, x;
  };
  std::vector<TapReach> tap_reach_;
  std::vector<std::vector<std::int64_t>> phase_taps_;  // [ry * stride_w + rx]: taps reaching it
  // Forward: the output pixels [y0, y1) x [x0, x1) read no padding (field_start); pixel (oy, ox)
  // reads tap t at x(oy*sh, ox*sw) + tap_offsets_[t].
  struct Inside {
    std::int64_t y0, y1, x0, x1;
  };
  Inside inside_{};
  std::vector<std::int64_t> tap_offsets_;
  // The same for a whole pixel row of the im2col matrix in NHWC: runs of taps whose channels
  // follow on in x, each copied from x(oy*sh, ox*sw) + offset to the row's value `at`.
  struct TapRun {
    std::int64_t offset, at, count;
  };
  std::vector<TapRun> tap_runs_;
  bool shallow_ = false;            // forward and backward-filter in blocks of pixel rows
  bool shallow_data_ = false;       // backward-data, likewise
  std::int64_t shallow_row_ = 0;    // elements per pixel of their row blocks
  std::size_t data_filter_at_ = 0;  // backward-data's filter matrix for one phase
  std::size_t rows_at_ = 0, dws_at_ = 0;
  // Per-thread packing buffers: slices of the workspace.
  template <class T>
  T* panels(std::size_t at) {
    return slice<T>(memory_, at);
  }
  std::size_t a_at_ = 0, b_at_ = 0, workspace_bytes_ = 0;
  // Backward-filter with the pixels split between the threads: each its own B and dw.
  static constexpr std::int64_t kSplitLimit = std::int64_t(1) << 21;  // elements of all the dws
  bool split_filter_ = false;
  bool filter_transposed_ = false;  // split, as dw^T = dy^T im2col
  std::size_t split_b_at_ = 0, split_c_at_ = 0;
  std::byte* memory_ = nullptr;  // the workspace memory of the current pass
};

Plugin* create(const Params& p, const PluginContext&) { return new GemmConv(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(
        .kind = "conv", .name = "implicit_gemm",
        .description =
            "implicit GEMM on BLIS's micro-kernel, im2col done while packing (no cols buffer)",
        .parameters = R"({"path": "auto", "split_filter": "auto"})",
        .traits = R"({"aliases": ["gemm"], "precisions": ["bf16", "fp16"],
                  "conformance": [{"params": {}}, {"params": {"path": "microkernel"}},
                                  {"params": {"path": "shallow"}},
                                  {"params": {"split_filter": "never"}}]})",
        .factory = create)
