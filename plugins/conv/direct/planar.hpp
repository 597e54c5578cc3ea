// The planar engine of `direct`, for NCHW and for NHWC layers with few channels: convolution
// without any GEMM or cols buffer, for stride 1 and no dilation. Each sample is moved into a
// zero-padded planar tile (C planes of Hp x Wt, Wt a whole number of vectors plus slack; or, where
// rows are not whole vectors, Wt exactly the padded width, the plane then correlated as one long
// row: see correlate), small enough to stay in cache, and the micro-kernel runs along image rows, 8
// (float) or 4 (double) neighbouring output pixels per vector, which suits the few-channel layers
// of small networks where vectors across channels would be mostly empty.
//   forward          y[k, oy, ox] = sum_{c,ky,kx} xt[c, oy+ky, ox+kx] * w[k, c, ky, kx]
//   backward-data    the same kernel: dx = full correlation of dy (padded by KH-1-ph, KW-1-pw) with
//                    the flipped, transposed filter wf[c, k, ky, kx] = w[k, c, KH-1-ky, KW-1-kx]
//   backward-filter  dw[k, c, ky, kx] += sum_{oy,ox} xt[c, oy+ky, ox+kx] * dy[k, oy, ox]
// NCHW samples are copied into the tiles row by row; NHWC ones are transposed into them (and the
// results back; transpose.hpp), which pays where vectors across a few channels would be mostly
// empty (simplecnn's 1->4 and 4->8 layers); wider NHWC layers go to channel_blocked.hpp.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/parallel.hpp"
#include "transpose.hpp"
#include "width.hpp"
#include "with_count.hpp"

#define DTNN_RB 3

namespace dtnn::direct {
inline namespace DTNN_DIRECT_WIDTH {  // width.hpp

constexpr std::int64_t kSlack = 8;  // elements readable past a tile row's last vector
// Backward-filter's register block scale (filter_kw) and the vector registers there are.
#if defined(__AVX512F__)
constexpr int kPlaneBlock = 4;
constexpr int kVectorRegisters = 32;
#else
constexpr int kPlaneBlock = 2;
constexpr int kVectorRegisters = 16;
#endif
constexpr int kMaxPlaneBlock = 8;  // the most output planes correlate's register blocks take

// A planar tile: `planes` planes of `rows` x `width` (width: whole vectors + slack).
struct Tile {
  std::int64_t planes = 0, rows = 0, width = 0;
  std::int64_t size() const { return planes * rows * width; }
};

inline std::int64_t round_up(std::int64_t v, std::int64_t m) { return (v + m - 1) / m * m; }

// One register block of correlate: output planes [k0, k0 + kb) x rows [oy, oy + RB) x vectors
// [v0, v0 + V). A weight broadcast feeds RB * V multiply-adds, an input load KB.
template <class T, int KB, int RB, int V>
inline void correlate_block(const T* in, const Tile& in_t, const T* f, std::int64_t k0,
                            std::int64_t kb, std::int64_t kh, std::int64_t kw, T* out,
                            const Tile& out_t, std::int64_t oy, std::int64_t v0) {
  constexpr int L = kLanes<T>;
  const std::int64_t ci_count = in_t.planes, taps = kh * kw, in_plane = in_t.rows * in_t.width;
  Vec<T> acc[KB][RB][V] = {};
  for (std::int64_t ci = 0; ci < ci_count; ++ci)
    for (std::int64_t ky = 0; ky < kh; ++ky) {
      const T* row = in + ci * in_plane + (oy + ky) * in_t.width + v0 * L;
      for (std::int64_t kx = 0; kx < kw; ++kx) {
        const T* wt = f + k0 * ci_count * taps + (ci * kh + ky) * kw + kx;  // zeros past kb
        if constexpr (KB * RB * V + KB + 1 > kVectorRegisters) {
          // The block's inputs in registers, one weight at a time beside them: the accumulators
          // and all KB weights would not fit (8 x 3 spilled to the stack, simplecnn's 4->8 layer
          // forward 0.33 against 0.31 ms on AMD Zen 5).
          Vec<T> xv[RB][V];
          for (int r = 0; r < RB; ++r)
            for (int v = 0; v < V; ++v) xv[r][v] = vload(row + r * in_t.width + kx + v * L);
          for (int b = 0; b < KB; ++b) {
            const T wb = wt[b * ci_count * taps];
            for (int r = 0; r < RB; ++r)
              for (int v = 0; v < V; ++v) acc[b][r][v] += wb * xv[r][v];
          }
        } else {  // the block's weights in registers, one input vector at a time (faster where
                  // both fit: backward-data's 4 x 4, 0.41 against 0.48 ms)
          T wv[KB];
          for (int b = 0; b < KB; ++b) wv[b] = wt[b * ci_count * taps];
          for (int r = 0; r < RB; ++r)
            for (int v = 0; v < V; ++v) {
              const Vec<T> x = vload(row + r * in_t.width + kx + v * L);
              for (int b = 0; b < KB; ++b) acc[b][r][v] += wv[b] * x;
            }
        }
      }
    }
  auto store = [&](int b) {
    for (int r = 0; r < RB; ++r)
      for (int v = 0; v < V; ++v)
        vstore(out + ((k0 + b) * out_t.rows + oy + r) * out_t.width + (v0 + v) * L, acc[b][r][v]);
  };
  // With 32 registers, a loop to kb indexes acc at run time and keeps a copy of it in memory,
  // zeroed with `rep stos` for every block: a loop to KB, tested, keeps acc in registers
  // (simplecnn's 4->8 layer f+b 0.97 -> 0.87 ms, its 1->4 forward 0.10 -> 0.075). With 16 the
  // block fills every register and the tested loop measured 3% slower.
  if constexpr (kVectorRegisters >= 32) {
    for (int b = 0; b < KB; ++b)
      if (b < kb) store(b);
  } else {
    for (int b = 0; b < kb; ++b) store(b);
  }
}

// All rows of one block of planes: pairs of rows (RB2), then a last single row; each row in blocks
// of VMAX vectors and a last block exactly as wide as what is left.
template <class T, int KB, int RB2, int VMAX>
void correlate_planes(const T* in, const Tile& in_t, const T* f, std::int64_t ko_count,
                      std::int64_t kh, std::int64_t kw, T* out, const Tile& out_t,
                      std::int64_t oy_count, std::int64_t ox_count) {
  constexpr int L = kLanes<T>;
  const std::int64_t vectors = (ox_count + L - 1) / L;
  auto rows = [&]<int RB>(std::int64_t k0, std::int64_t kb, std::int64_t oy) {
    std::int64_t v0 = 0;
    for (; v0 + VMAX <= vectors; v0 += VMAX)
      correlate_block<T, KB, RB, VMAX>(in, in_t, f, k0, kb, kh, kw, out, out_t, oy, v0);
    with_count<VMAX - 1>(static_cast<int>(vectors - v0), [&]<int V>() {
      correlate_block<T, KB, RB, V>(in, in_t, f, k0, kb, kh, kw, out, out_t, oy, v0);
    });
  };
  for (std::int64_t k0 = 0; k0 < ko_count; k0 += KB) {
    const std::int64_t kb = std::min<std::int64_t>(KB, ko_count - k0);
    std::int64_t oy = 0;
    for (; oy + RB2 <= oy_count; oy += RB2) rows.template operator()<RB2>(k0, kb, oy);
    for (; oy < oy_count; ++oy) rows.template operator()<1>(k0, kb, oy);
  }
}

// out[ko, oy, ox] (ko in [0, ko_count), oy < oy_count, ox < ox_count, in whole vectors) =
// sum over ci, ky, kx of in[ci, oy+ky, ox+kx] * f[ko, ci, ky, kx]. The register blocks, measured on
// simplecnn's 4->8 layer (conv_bench, 1 thread, AMD Zen 5, ms): with AVX-512's 32 registers 8
// planes x 3 vectors (forward 0.31), 4 planes x 2 rows x 3 vectors where there are 4 to 7 planes
// (backward-data 0.37, against 0.42 with 4 x 1 x 4 and 0.49 with 4 x 1 x 3), else 4 x 4; with 16,
// 4 planes x 3 vectors, the inputs in registers (forward 0.34 against 0.40 with 3 x 4,
// backward-data 0.47 against 0.57), else 3 planes x 4 vectors.
// Flat (`flat`): the tiles' rows are exactly as wide as the input's padded rows, so the planes
// correlate as one long row (oy_count 1, ox_count (rows - 1) * width + ox) that vectors run along
// across the row ends; the columns past ox of each row are computed and never read. Where ox is
// not a whole number of vectors this is less work (simplecnn's 26-wide rows: 91 vectors a plane
// against 104) and every block is whole; with AVX-512 4-7 planes then run 4 x 6 vectors.
template <class T>
void correlate(const T* in, const Tile& in_t, const T* f, std::int64_t ko_count, std::int64_t kh,
               std::int64_t kw, T* out, const Tile& out_t, std::int64_t oy_count,
               std::int64_t ox_count, bool flat) {
  if (flat) {
    ox_count += (oy_count - 1) * in_t.width;
    oy_count = 1;
  }
#if defined(__AVX512F__)
  if (ko_count >= 8)
    return correlate_planes<T, 8, 1, 3>(in, in_t, f, ko_count, kh, kw, out, out_t, oy_count,
                                        ox_count);
  if (ko_count >= 4 && flat)
    return correlate_planes<T, 4, 1, 6>(in, in_t, f, ko_count, kh, kw, out, out_t, oy_count,
                                        ox_count);
  if (ko_count >= 4)
    return correlate_planes<T, 4, 2, 3>(in, in_t, f, ko_count, kh, kw, out, out_t, oy_count,
                                        ox_count);
  correlate_planes<T, 4, 1, 4>(in, in_t, f, ko_count, kh, kw, out, out_t, oy_count, ox_count);
#else
  if (ko_count >= 4)
    return correlate_planes<T, 4, 1, 3>(in, in_t, f, ko_count, kh, kw, out, out_t, oy_count,
                                        ox_count);
  correlate_planes<T, 3, 1, 4>(in, in_t, f, ko_count, kh, kw, out, out_t, oy_count, ox_count);
#endif
}

class Planar {
 public:
  static bool supports(const ConvGeometry& g, std::string& why_not) {
    if (g.stride_h != 1 || g.stride_w != 1) {
      why_not = "stride 1 only";
      return false;
    }
    if (g.dilation_h != 1 || g.dilation_w != 1) {
      why_not = "no dilation only";
      return false;
    }
    if (g.kw > 16) {
      why_not = "kernels wider than 16";
      return false;
    }
    if (g.pad_h >= g.kh || g.pad_w >= g.kw) {
      why_not = "padding must be smaller than the kernel";
      return false;
    }
    return true;
  }

  void prepare(const ConvGeometry& g) {
    g_ = g;
    const std::int64_t L = dtype_size(g.dtype) == 4 ? 8 : 4, V = 4 * L;
    ho_ = g.ho();
    wo_ = g.wo();
    qh_ = g.kh - 1 - g.pad_h;
    qw_ = g.kw - 1 - g.pad_w;
    const std::int64_t lanes = dtype_size(g.dtype) == 4 ? kLanes<float> : kLanes<double>;
    // Forward: x padded by (ph, pw) into y planes; backward-data: dy padded by (kh-1-ph, kw-1-pw)
    // into dx planes. Each flat where that is less work (see correlate), else in rows: the input
    // tile's rows wide enough for every vector block of a row.
    flat_forward_ = flat_is_less_work(ho_, wo_, g.w + 2 * g.pad_w, lanes);
    flat_data_ = flat_is_less_work(g.h, g.w, wo_ + 2 * qw_, lanes);
    if (flat_forward_) {
      x_t_ = flat_tile(g.c, g.h + 2 * g.pad_h, g.w + 2 * g.pad_w, lanes);
      y_t_ = flat_tile(g.k, ho_, x_t_.width, lanes);
    } else {
      x_t_ = {g.c, g.h + 2 * g.pad_h, round_up(wo_, V) + g.kw + kSlack};
      y_t_ = {g.k, ho_, round_up(wo_, V)};
    }
    if (flat_data_) {
      dy_t_ = flat_tile(g.k, ho_ + 2 * qh_, wo_ + 2 * qw_, lanes);
      dx_t_ = flat_tile(g.c, g.h, dy_t_.width, lanes);
    } else {
      dy_t_ = {g.k, ho_ + 2 * qh_, round_up(g.w, V) + g.kw + kSlack};
      dx_t_ = {g.c, g.h, round_up(g.w, V)};
    }
    // Backward-filter: x as in rows, and dy planes zero past wo.
    xf_t_ = {g.c, g.h + 2 * g.pad_h, round_up(wo_, V) + g.kw + kSlack};
    dyp_t_ = {g.k, ho_, round_up(wo_, V) + kSlack};
    threads_ = std::max(1, omp_get_max_threads());
    // ... and backward-filter's partial sums: a vector of lanes for each value of dw.
    const std::int64_t per_thread = x_t_.size() + y_t_.size() + dy_t_.size() + dx_t_.size() +
                                    dyp_t_.size() + xf_t_.size() + g.k * g.c * g.kh * g.kw * lanes;
    per_thread_ = per_thread;
    const std::size_t size = dtype_size(g.dtype);
    WorkspaceSlices slices;
    scratch_at_ = slices.add<std::byte>(threads_ * per_thread * size);
    // The filter copies, their output planes rounded up to whole register blocks (zeros past the
    // last), so that correlate reads a block's weights without testing which planes exist.
    filter_at_ = slices.add<std::byte>(round_up(g.k, kMaxPlaneBlock) * g.c * g.kh * g.kw * size);
    flipped_at_ = slices.add<std::byte>(round_up(g.c, kMaxPlaneBlock) * g.k * g.kh * g.kw * size);
    scratch_bytes_ = threads_ * per_thread * size;
    workspace_bytes_ = slices.bytes();
  }

  // What the passes need of the workspace memory each is given.
  std::size_t workspace_bytes() const { return workspace_bytes_; }

  // Whether an oy x ox output correlated flat from input rows `width` wide takes fewer vectors than
  // row by row.
  static bool flat_is_less_work(std::int64_t oy, std::int64_t ox, std::int64_t width,
                                std::int64_t lanes) {
    const std::int64_t flat = ((oy - 1) * width + ox + lanes - 1) / lanes;
    const std::int64_t rows = oy * ((ox + lanes - 1) / lanes);
    return flat < rows;
  }
  // A flat tile: planes of `rows` rows exactly `width` wide, and rows enough below them for a
  // vector that starts on the last row: flat vectors read (and write) up to lanes - 1 values past
  // a plane's last row, which belong only to columns nobody reads.
  static Tile flat_tile(std::int64_t planes, std::int64_t rows, std::int64_t width,
                        std::int64_t lanes) {
    return {planes, rows + (lanes + width - 1) / width, width};
  }

  void forward(const Tensor& x, const Tensor& w, Tensor& y, std::byte* memory) {
    use(memory);
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, w, y); });
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx, std::byte* memory) {
    use(memory);
    dispatch_dtype(dy.dtype(), [&](auto z) { data_t<decltype(z)>(dy, w, dx); });
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw, std::byte* memory) {
    use(memory);
    dispatch_dtype(x.dtype(), [&](auto z) { filter_t<decltype(z)>(x, dy, dw); });
  }

 private:
  // Takes the pass's workspace memory; the tiles' borders must be zero, and another layer may
  // have used the memory since this one's last pass.
  void use(std::byte* memory) {
    memory_ = memory;
    std::memset(memory + scratch_at_, 0, scratch_bytes_);
  }
  template <class T>
  T* filter_copy(bool flipped) const {
    return slice<T>(memory_, flipped ? flipped_at_ : filter_at_);
  }

  // Scratch of thread t: x tile, y tile, dy tile, dx tile, dy planes, backward-filter's x tile,
  // dw partial.
  template <class T>
  T* part(int t, int which) const {
    T* p = slice<T>(memory_, scratch_at_) + t * per_thread_;
    const std::int64_t sizes[] = {x_t_.size(),  y_t_.size(),   dy_t_.size(),
                                  dx_t_.size(), dyp_t_.size(), xf_t_.size()};
    for (int i = 0; i < which; ++i) p += sizes[i];
    return p;
  }

  bool nhwc() const { return g_.layout == Layout::nhwc; }

  // Sample s of an activation (planes of h x w, in the layer's layout) into a tile at (top,
  // left); the tile's borders stay zero (zeroed at the start of each pass, never written).
  template <class T>
  void to_tile(const T* src, std::int64_t s, std::int64_t planes, std::int64_t h, std::int64_t w,
               T* tile, const Tile& t, std::int64_t top, std::int64_t left) const {
    const T* img = src + s * planes * h * w;
    if (nhwc() && planes > 1) {  // pixel q's channel p to plane p's column q
      for (std::int64_t r = 0; r < h; ++r)
        pixels_to_planes(img + r * w * planes, w, planes, tile + (top + r) * t.width + left,
                         t.rows * t.width);
      return;
    }
    for (std::int64_t p = 0; p < planes; ++p)
      for (std::int64_t r = 0; r < h; ++r)
        std::memcpy(tile + (p * t.rows + top + r) * t.width + left, img + (p * h + r) * w,
                    sizeof(T) * static_cast<std::size_t>(w));
  }

  // Tile planes (h x w of each) back into sample s of an activation in the layer's layout.
  template <class T>
  void from_tile(const T* tile, const Tile& t, std::int64_t planes, std::int64_t h, std::int64_t w,
                 T* dst, std::int64_t s) const {
    T* img = dst + s * planes * h * w;
    if (nhwc() && planes > 1) {  // plane p's column q to pixel q's channel p
      for (std::int64_t r = 0; r < h; ++r)
        planes_to_pixels(tile + r * t.width, t.rows * t.width, w, planes, img + r * w * planes);
      return;
    }
    for (std::int64_t p = 0; p < planes; ++p)
      for (std::int64_t r = 0; r < h; ++r)
        std::memcpy(img + (p * h + r) * w, tile + (p * t.rows + r) * t.width,
                    sizeof(T) * static_cast<std::size_t>(w));
  }

  // Offset of filter value (k, c, ky, kx) in the layer's layout: [K, C, KH, KW] (NCHW) or
  // [KH, KW, C, K] (NHWC).
  std::int64_t filter_at(std::int64_t k, std::int64_t c, std::int64_t ky, std::int64_t kx) const {
    return nhwc() ? ((ky * g_.kw + kx) * g_.c + c) * g_.k + k
                  : ((k * g_.c + c) * g_.kh + ky) * g_.kw + kx;
  }

  // w -> filter [k, c, ky, kx] (a copy); flipped [c, k, ky, kx] = w[k, c, KH-1-ky, KW-1-kx].
  template <class T>
  void pack_filters(const Tensor& w, bool flip) {
    const T* src = w.data<T>();
    T* out = filter_copy<T>(flip);
    const std::int64_t C = g_.c, K = g_.k, KH = g_.kh, KW = g_.kw;
    // The copy's output planes (each of `plane` values), then zero ones up to a whole block.
    const std::int64_t planes = flip ? C : K, plane = (flip ? K : C) * KH * KW;
    std::fill(out + planes * plane, out + round_up(planes, kMaxPlaneBlock) * plane, T(0));
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t ky = 0; ky < KH; ++ky)
          for (std::int64_t kx = 0; kx < KW; ++kx) {
            const T v = src[filter_at(k, c, ky, kx)];
            if (flip)
              out[((c * K + k) * KH + (KH - 1 - ky)) * KW + (KW - 1 - kx)] = v;
            else
              out[((k * C + c) * KH + ky) * KW + kx] = v;
          }
  }

  // Forward and backward-data alike: each sample of src (in_planes of in_h x in_w) goes into the
  // tile of scratch part in_part at (top, left), is correlated with filter into out_planes of
  // out_h x out_w in scratch part out_part, and lands in dst.
  template <class T>
  void correlate_samples(const T* src, std::int64_t n, std::int64_t in_planes, std::int64_t in_h,
                         std::int64_t in_w, const Tile& in_t, int in_part, std::int64_t top,
                         std::int64_t left, const T* filter, std::int64_t out_planes,
                         const Tile& out_t, int out_part, std::int64_t out_h, std::int64_t out_w,
                         bool flat, T* dst) {
    const int threads = std::min<int>(threads_, omp_get_max_threads());
#pragma omp parallel for schedule(static) num_threads(threads)
    for (std::int64_t s = 0; s < n; ++s) {
      const int t = omp_get_thread_num();
      T* in = part<T>(t, in_part);
      T* out = part<T>(t, out_part);
      to_tile(src, s, in_planes, in_h, in_w, in, in_t, top, left);
      correlate(in, in_t, filter, out_planes, g_.kh, g_.kw, out, out_t, out_h, out_w, flat);
      from_tile(out, out_t, out_planes, out_h, out_w, dst, s);
    }
  }

  template <class T>
  void forward_t(const Tensor& x, const Tensor& w, Tensor& y) {
    pack_filters<T>(w, false);
    correlate_samples(x.data<T>(), x.dim(0), g_.c, g_.h, g_.w, x_t_, 0, g_.pad_h, g_.pad_w,
                      filter_copy<T>(false), g_.k, y_t_, 1, ho_, wo_, flat_forward_, y.data<T>());
  }

  // The full correlation of dy with the flipped filter [c, k, ky, kx]: input planes k, output c.
  template <class T>
  void data_t(const Tensor& dy, const Tensor& w, Tensor& dx) {
    pack_filters<T>(w, true);
    correlate_samples(dy.data<T>(), dy.dim(0), g_.k, ho_, wo_, dy_t_, 2, qh_, qw_,
                      filter_copy<T>(true), g_.c, dx_t_, 3, g_.h, g_.w, flat_data_, dx.data<T>());
  }

  template <class T>
  void filter_t(const Tensor& x, const Tensor& dy, Tensor& dw) {
    switch (g_.kw) {
      case 1:
        return filter_kw<T, 1>(x, dy, dw);
      case 2:
        return filter_kw<T, 2>(x, dy, dw);
      case 3:
        return filter_kw<T, 3>(x, dy, dw);
      case 4:
        return filter_kw<T, 4>(x, dy, dw);
      case 5:
        return filter_kw<T, 5>(x, dy, dw);
      default:
        return filter_kw<T, 0>(x, dy, dw);
    }
  }

  // Per sample and (c0..c0+CB, ky): dw[k0..k0+KB, c, ky, 0..KW) as vector sums along the rows:
  // each dy load feeds CB*KW multiply-adds, each x load KB; horizontal sums at the end.
  // KW_ = 0: any width.
  template <class T, int KW_>
  void filter_kw(const Tensor& x, const Tensor& dy, Tensor& dw) {
    // KB x CB x KW accumulators, KB rows of dy and an x vector in registers: with 16 of them
    // (AVX2, SSE) 3 x 1 x 3 + 4, with 32 (AVX-512) 4 x 2 x 3 + 5.
    constexpr int L = kLanes<T>, KB = kPlaneBlock >= 4 ? 4 : 3, CB = kPlaneBlock / 2,
                  KWM = KW_ ? KW_ : 16;
    const std::int64_t C = g_.c, K = g_.k, KH = g_.kh, KW = KW_ ? KW_ : g_.kw, taps = KH * KW;
    const std::int64_t vectors = (wo_ + L - 1) / L;
    const T* xp = x.data<T>();
    const T* dyp = dy.data<T>();
    const int threads = std::min<int>(threads_, omp_get_max_threads());
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      T* xt = part<T>(t, 5);
      T* dyt = part<T>(t, 4);
      T* partial = part<T>(t, 6);  // [k, c, ky, kx] vectors of lanes, summed across at the end
      std::fill(partial, partial + K * C * taps * L, T(0));
#pragma omp for schedule(static)
      for (std::int64_t s = 0; s < x.dim(0); ++s) {
        to_tile(xp, s, C, g_.h, g_.w, xt, xf_t_, g_.pad_h, g_.pad_w);
        to_tile(dyp, s, K, ho_, wo_, dyt, dyp_t_, 0, 0);  // columns past wo stay zero
        for (std::int64_t k0 = 0; k0 < K; k0 += KB) {
          const std::int64_t kb = std::min<std::int64_t>(KB, K - k0);
          for (std::int64_t c0 = 0; c0 < C; c0 += CB) {
            const std::int64_t cb = std::min<std::int64_t>(CB, C - c0);
            for (std::int64_t ky = 0; ky < KH; ++ky) {
              Vec<T> acc[CB][KB][KWM] = {};
              for (std::int64_t oy = 0; oy < ho_; ++oy) {
                const T* xrow[CB];
                for (int e = 0; e < CB; ++e)
                  xrow[e] = xt + ((c0 + std::min<std::int64_t>(e, cb - 1)) * xf_t_.rows + oy + ky) *
                                     xf_t_.width;
                const T* drow[KB];
                for (int b = 0; b < KB; ++b)
                  drow[b] = dyt + ((k0 + std::min<std::int64_t>(b, kb - 1)) * dyp_t_.rows + oy) *
                                      dyp_t_.width;
                for (std::int64_t v = 0; v < vectors; ++v) {
                  Vec<T> d[KB];
                  for (int b = 0; b < KB; ++b) d[b] = vload(drow[b] + v * L);
                  for (int e = 0; e < CB; ++e)
                    for (std::int64_t kx = 0; kx < KW; ++kx) {
                      const Vec<T> xv = vload(xrow[e] + v * L + kx);
                      for (int b = 0; b < KB; ++b) acc[e][b][kx] += d[b] * xv;
                    }
                }
              }
              for (int e = 0; e < CB; ++e)
                for (int b = 0; b < KB; ++b)
                  for (int kx = 0; kx < KWM; ++kx) {
                    if (e >= cb || b >= kb || kx >= KW) continue;
                    // Added as a vector: the lanes are summed once, after every sample (summed
                    // here, per sample, they took a sixth of the pass on simplecnn's 4->8 layer).
                    T* slot = partial + ((((k0 + b) * C + c0 + e) * KH + ky) * KW + kx) * L;
                    vstore(slot, vload<T>(slot) + acc[e][b][kx]);
                  }
            }
          }
        }
      }
    }
    // Sum the partials ([k, c, ky, kx], lanes and threads) into dw in its layout.
    T* out = dw.data<T>();
    for (std::int64_t k = 0; k < K; ++k)
      for (std::int64_t c = 0; c < C; ++c)
        for (std::int64_t ky = 0; ky < KH; ++ky)
          for (std::int64_t kx = 0; kx < KW; ++kx) {
            const std::int64_t at = ((k * C + c) * KH + ky) * KW + kx;
            T sum = 0;
            for (int t = 0; t < threads; ++t)
              for (int l = 0; l < L; ++l) sum += part<T>(t, 6)[at * L + l];
            out[filter_at(k, c, ky, kx)] += sum;
          }
  }

  ConvGeometry g_;
  std::int64_t ho_ = 0, wo_ = 0, qh_ = 0, qw_ = 0, per_thread_ = 0;
  int threads_ = 1;
  Tile x_t_, y_t_, dy_t_, dx_t_, dyp_t_, xf_t_;
  bool flat_forward_ = false, flat_data_ = false;  // forward, backward-data correlate flat
  std::size_t scratch_at_ = 0, filter_at_ = 0, flipped_at_ = 0;  // slices of the workspace
  std::size_t scratch_bytes_ = 0, workspace_bytes_ = 0;
  std::byte* memory_ = nullptr;  // the workspace memory of the current pass
};

}  // namespace DTNN_DIRECT_WIDTH
}  // namespace dtnn::direct
