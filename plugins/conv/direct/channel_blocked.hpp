// The NHWC engine of `direct` (PyDTNN's ConvDirect idea): convolution straight from the tensors,
// blocked over channels and output pixels, with a register-blocked vector micro-kernel and no
// workspace but a zero row standing in for the padding and the row pointers of a chunk. In NHWC the
// channels are innermost, in the activations and in the filter [KH, KW, C, K], so every pass
// vectorises along a channel run:
//   forward          y[p, k]  = sum_(t,c) x_t(p)[c] w[t, c, k]        a block of M pixels x NV
//                    vectors of output channels; x broadcast, w loaded (outer products).
//   backward-data    dx[q, c] = sum_(t,k) dy_t(q)[k] w[t, c, k]       a block of M pixels x NC
//                    input channels; dy and w rows both run along k, so the block holds vector
//                    partial sums, added up once at the end (inner products). Pixels go in
//                    stride-phase order, so a block's pixels mostly share which taps reach them
//                    and a tap reaching none is skipped (no work on the zeros of a strided layer).
//   backward-filter  dw[t, c, k] += sum_p x_t(p)[c] dy[p, k]          a block of MC input channels
//                    x NV vectors of output channels for one tap, summed over a chunk of pixels
//                    that stays in cache; each thread owns its (tap, c, k) blocks of dw.
// x_t(p) is the input row that tap t = (ky, kx) of output pixel p reads (the zero row where that is
// padding); dy_t(q) the dy row that reaches input pixel q through tap t. Any stride, padding and
// dilation; float and double.
#pragma once
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "bf16_forward.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/workspace.hpp"
#include "width.hpp"
#include "with_count.hpp"

namespace dtnn::direct {
inline namespace DTNN_DIRECT_WIDTH {  // width.hpp

#if defined(__AVX512F__)
inline constexpr int kPixels = 6, kVectors = 4;  // 24 accumulators of 32 vector registers
#else
inline constexpr int kPixels = 6, kVectors = 2;  // 12 accumulators of 16
#endif

template <class V, class T>
inline constexpr int kLanesOf = static_cast<int>(sizeof(V) / sizeof(T));

template <class V, class T>
inline V load_as(const T* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

template <class V, class T>
inline void store_as(T* p, const V& v) {
  std::memcpy(p, &v, sizeof v);
}

template <class V, class T>
inline T lane_sum(V v) {
  T sum = 0;
  for (int i = 0; i < kLanesOf<V, T>; ++i) sum += v[i];
  return sum;
}

// ---- micro-kernels -------------------------------------------------------------------------

// out[m][j] (+)= sum over taps t and channels c in [c0, c1) of rows[t][m][c] * w[t*C*K + c*K + j],
// for m < M and j < NV vectors of V: M pixels by NV vectors of output channels; added to what out
// holds when accumulate is set.
template <class T, class V, int M, int NV>
void forward_kernel(const T* const* rows, std::int64_t taps, std::int64_t C, std::int64_t c0,
                    std::int64_t c1, const T* w, std::int64_t K, T* const* out, bool accumulate) {
  constexpr int L = kLanesOf<V, T>;
  V acc[M][NV] = {};
  if (accumulate)
    for (int m = 0; m < M; ++m)
      for (int j = 0; j < NV; ++j) acc[m][j] = load_as<V>(out[m] + j * L);
  for (std::int64_t t = 0; t < taps; ++t) {
    const T* const* r = rows + t * M;
    const T* wt = w + t * C * K;
    for (std::int64_t c = c0; c < c1; ++c) {
      V wv[NV];
      for (int j = 0; j < NV; ++j) wv[j] = load_as<V>(wt + c * K + j * L);
      for (int m = 0; m < M; ++m) {
        const T xv = r[m][c];
        for (int j = 0; j < NV; ++j) acc[m][j] += xv * wv[j];
      }
    }
  }
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < NV; ++j) store_as(out[m] + j * L, acc[m][j]);
}

// out[m][j] = sum over taps t and k < K of rows[t][m][k] * w[t*C*K + j*K + k], for m < M and
// j < NC input channels: vector partial sums along k, one lane sum at the end. A tap whose first
// row is null reaches none of the M pixels and is skipped.
template <class T, int M, int NC>
void data_kernel(const T* const* rows, std::int64_t taps, std::int64_t C, const T* w,
                 std::int64_t K, T* const* out) {
  using V = Vec<T>;
  constexpr int L = kLanes<T>;
  const std::int64_t kv = K - K % L;
  {
    V acc[M][NC] = {};
    for (std::int64_t t = 0; t < taps; ++t) {
      const T* const* r = rows + t * M;
      if (!r[0]) continue;
      const T* wt = w + t * C * K;
      for (std::int64_t k = 0; k < kv; k += L) {
        V wv[NC];
        for (int j = 0; j < NC; ++j) wv[j] = load_as<V>(wt + j * K + k);
        for (int m = 0; m < M; ++m) {
          const V d = load_as<V>(r[m] + k);
          for (int j = 0; j < NC; ++j) acc[m][j] += d * wv[j];
        }
      }
    }
    for (int m = 0; m < M; ++m)
      for (int j = 0; j < NC; ++j) out[m][j] = lane_sum<V, T>(acc[m][j]);
  }
  if (kv == K) return;
  // The channels past the last whole vector, in a pass of their own (so that their scalar sums
  // do not compete with the vector ones for registers).
  T acc[M][NC] = {};
  for (std::int64_t t = 0; t < taps; ++t) {
    const T* const* r = rows + t * M;
    if (!r[0]) continue;
    const T* wt = w + t * C * K;
    for (std::int64_t k = kv; k < K; ++k)
      for (int m = 0; m < M; ++m)
        for (int j = 0; j < NC; ++j) acc[m][j] += r[m][k] * wt[j * K + k];
  }
  for (int m = 0; m < M; ++m)
    for (int j = 0; j < NC; ++j) out[m][j] += acc[m][j];
}

// dw[c*K + j] += sum over pixels p < P (x[p] non-null) of x[p][xo + c] * dy[p][dyo + j], for
// c < MC input channels and j < NV vectors of V of output channels.
template <class T, class V, int MC, int NV>
void filter_kernel(const T* const* x, std::int64_t xo, const T* const* dy, std::int64_t dyo,
                   std::int64_t P, T* dw, std::int64_t K) {
  constexpr int L = kLanesOf<V, T>;
  V acc[MC][NV];
  for (int c = 0; c < MC; ++c)
    for (int j = 0; j < NV; ++j) acc[c][j] = load_as<V>(dw + c * K + j * L);
  for (std::int64_t p = 0; p < P; ++p) {
    if (!x[p]) continue;
    const T* xr = x[p] + xo;
    const T* dr = dy[p] + dyo;
    V d[NV];
    for (int j = 0; j < NV; ++j) d[j] = load_as<V>(dr + j * L);
    for (int c = 0; c < MC; ++c) {
      const T xv = xr[c];
      for (int j = 0; j < NV; ++j) acc[c][j] += xv * d[j];
    }
  }
  for (int c = 0; c < MC; ++c)
    for (int j = 0; j < NV; ++j) store_as(dw + c * K + j * L, acc[c][j]);
}

// ---- dispatch of a block's runtime sizes to the kernels' compile-time ones ------------------

// Output channels [0, K) as blocks of NV vectors, a block of the vectors left, then single
// channels: f.template operator()<V, NV>(k0) for each.
template <class T, class F>
inline void for_channel_blocks(std::int64_t K, F&& f) {
  using V = Vec<T>;
  constexpr int L = kLanes<T>;
  std::int64_t k0 = 0;
  for (; k0 + kVectors * L <= K; k0 += kVectors * L) f.template operator()<V, kVectors>(k0);
  if (const int left = static_cast<int>((K - k0) / L); left > 0) {
    with_count<kVectors>(left, [&]<int NV>() { f.template operator()<V, NV>(k0); });
    k0 += left * L;
  }
  for (; k0 < K; ++k0) f.template operator()<T, 1>(k0);
}

// ---- the engine ------------------------------------------------------------------------------

// Forward and backward-data share out their pixels as chunks of kChunkBlocks blocks of M; a chunk's
// row pointers are found once and its rows stay in cache while every channel block passes over
// them. When there are too few chunks for the threads, the channels are split into parts as well.
inline constexpr int kChunkBlocks = 16;
inline constexpr std::int64_t kChannelSlice = 128;  // forward's input channels per filter panel

struct WorkSplit {
  std::int64_t chunks, parts, part;  // part: channels per part, a multiple of the grain
  static WorkSplit of(std::int64_t pixels, std::int64_t channels, std::int64_t grain) {
    const std::int64_t chunk = kPixels * kChunkBlocks, chunks = (pixels + chunk - 1) / chunk;
    const std::int64_t wanted = 8 * std::max(1, omp_get_max_threads());
    const std::int64_t parts =
        std::clamp<std::int64_t>((wanted + chunks - 1) / chunks, 1, (channels + grain - 1) / grain);
    return {chunks, parts, ((channels + parts - 1) / parts + grain - 1) / grain * grain};
  }
  // item(p0, p_end, begin, end) for every chunk [p0, p_end) of the pixels and part [begin, end)
  // of the channels, shared among the threads.
  template <class F>
  void for_each(std::int64_t pixels, std::int64_t channels, F&& item) const {
    const std::int64_t chunk = kPixels * kChunkBlocks;
#pragma omp parallel for collapse(2) schedule(static)
    for (std::int64_t ch = 0; ch < chunks; ++ch)
      for (std::int64_t p = 0; p < parts; ++p) {
        const std::int64_t begin = p * part;
        if (begin >= channels) continue;
        item(ch * chunk, std::min(pixels, ch * chunk + chunk), begin,
             std::min(channels, begin + part));
      }
  }
};

class ChannelBlocked {
 public:
  void prepare(const ConvGeometry& g) {
    g_ = g;
    ho_ = g.ho();
    wo_ = g.wo();
    // The workspace: the zero row, and per thread a chunk's row pointers [block][tap][pixel]
    // (forward, backward-data) or backward-filter's two rows per pixel of its chunk.
    zeros_count_ = std::max(g.c, g.k);
    per_thread_ = std::max(kChunkBlocks * g.kh * g.kw * kPixels, 2 * filter_chunk());
    WorkspaceSlices slices;
    zeros_at_ = slices.add<std::byte>(zeros_count_ * dtype_size(g.dtype));
    rows_at_ = slices.add<const void*>(per_thread_ * std::max(1, omp_get_max_threads()));
    // bf16 products (bf16_forward.hpp): the input and the filter as pairs of input channels.
    bf16_ = bf16::runs(g);
    pairs_ = (g.c + 1) / 2;
    if (bf16_) {  // (backward-filter's bf16 x fits in the input's pairs)
      x_pairs_at_ = slices.add<std::uint32_t>(g.n * g.h * g.w * pairs_);
      w_pairs_at_ = slices.add<std::uint32_t>(g.kh * g.kw * pairs_ * g.k);
      dy_pairs_at_ = slices.add<std::uint32_t>((g.n * ho_ * wo_ + 1) / 2 * g.k);
    }
    workspace_bytes_ = slices.bytes();
  }
  // Whether forward multiplies in bf16 (bf16_forward.hpp).
  bool bf16_products() const { return bf16_; }
  // What the passes need of the workspace memory each is given.
  std::size_t workspace_bytes() const { return workspace_bytes_; }
  const ConvGeometry& geometry() const { return g_; }

  // Each pass takes its workspace memory first.
  template <class T>
  void use(std::byte* memory) {
    memory_ = memory;
    std::fill_n(slice<T>(memory, zeros_at_), zeros_count_, T(0));
  }

  template <class T>
  void forward(const T* x, const T* w, T* y, std::int64_t n);
  template <class T>
  void backward_data(const T* dy, const T* w, T* dx, std::int64_t n);
  template <class T>
  void backward_filter(const T* x, const T* dy, T* dw, std::int64_t n);

 private:
  // The input row tap (ky, kx) of output pixel o reads, or null where that is padding.
  template <class T>
  const T* input_row(const T* x, const Pixel& o, std::int64_t ky, std::int64_t kx) const {
    const std::int64_t iy = o.y * g_.stride_h - g_.pad_h + ky * g_.dilation_h;
    const std::int64_t ix = o.x * g_.stride_w - g_.pad_w + kx * g_.dilation_w;
    if (iy < 0 || iy >= g_.h || ix < 0 || ix >= g_.w) return nullptr;
    return x + ((o.n * g_.h + iy) * g_.w + ix) * g_.c;
  }
  // rows[b][t][m] for the chunk of pixels [p0, p0 + count): the input row tap t of pixel m of
  // block b reads, the zero row where that is padding or past p_end. Taps are stepped through
  // row by row (no division per tap: this runs once per pixel and tap, as often as a kernel's
  // inner loop on layers of few channels).
  // A row of x holds `row` values (g_.c by default; bf16 pairs: the pairs).
  template <class T>
  void set_input_rows(const T* x, std::int64_t p0, std::int64_t p_end, std::int64_t count,
                      const T** rows, std::int64_t row = 0) const {
    if (row == 0) row = g_.c;
    constexpr int M = kPixels;
    const std::int64_t taps = g_.kh * g_.kw;
    const T* zero = zero_row<T>();
    Pixel o = Pixel::at(p0, ho_, wo_);
    for (std::int64_t j = 0; j < count; ++j, o.next(ho_, wo_)) {
      const T** slot = rows + j / M * taps * M + j % M;  // slot[t * M]: tap t
      if (p0 + j >= p_end) {
        for (std::int64_t t = 0; t < taps; ++t) slot[t * M] = zero;
        continue;
      }
      const T* sample = x + o.n * g_.h * g_.w * row;
      const std::int64_t iy0 = o.y * g_.stride_h - g_.pad_h, ix0 = o.x * g_.stride_w - g_.pad_w;
      std::int64_t t = 0;
      for (std::int64_t ky = 0; ky < g_.kh; ++ky) {
        const std::int64_t iy = iy0 + ky * g_.dilation_h;
        const bool row_inside = iy >= 0 && iy < g_.h;
        for (std::int64_t kx = 0; kx < g_.kw; ++kx, ++t) {
          const std::int64_t ix = ix0 + kx * g_.dilation_w;
          slot[t * M] = row_inside && ix >= 0 && ix < g_.w ? sample + (iy * g_.w + ix) * row : zero;
        }
      }
    }
  }
  // xr[i] = the input row tap t of output pixel p0 + i reads (null where padding), for i < count:
  // backward-filter's rows of a chunk.
  template <class T>
  void set_tap_rows(const T* x, std::int64_t p0, std::int64_t count, std::int64_t t,
                    const T** xr) const {
    Pixel o = Pixel::at(p0, ho_, wo_);
    for (std::int64_t i = 0; i < count; ++i, o.next(ho_, wo_))
      xr[i] = input_row(x, o, t / g_.kw, t % g_.kw);
  }
  // The dy row that reaches input pixel q through tap (ky, kx), or null.
  template <class T>
  const T* output_row(const T* dy, const Pixel& q, std::int64_t ky, std::int64_t kx) const {
    std::int64_t oy, ox;
    if (!g_.output_reading(q.y, q.x, ky, kx, ho_, wo_, oy, ox)) return nullptr;
    return dy + ((q.n * ho_ + oy) * wo_ + ox) * g_.k;
  }
  template <class T>
  const T* zero_row() const {
    return slice<const T>(memory_, zeros_at_);
  }
  // Thread t's row pointers.
  template <class T>
  const T** rows(int t) {
    return slice<const T*>(memory_, rows_at_) + t * per_thread_;
  }
  // Backward-filter's chunk: pixels whose x and dy rows stay in cache together (even: bf16's
  // pairs of pixels never straddle two chunks).
  std::int64_t filter_chunk() const {
    return std::clamp<std::int64_t>(65536 / (g_.c + g_.k), 64, 4096) / 2 * 2;
  }

  void forward_bf16(const float* x, const float* w, float* y, std::int64_t n);
  void backward_filter_bf16(const float* x, const float* dy, float* dw, std::int64_t n);

  ConvGeometry g_;
  bool bf16_ = false;
  std::int64_t pairs_ = 0;
  std::size_t x_pairs_at_ = 0, w_pairs_at_ = 0, dy_pairs_at_ = 0;
  std::int64_t ho_ = 0, wo_ = 0, per_thread_ = 0, zeros_count_ = 0;
  std::size_t zeros_at_ = 0, rows_at_ = 0, workspace_bytes_ = 0;  // slices of the workspace
  std::byte* memory_ = nullptr;  // the workspace memory of the current pass
};

// Position j of a row of `size` pixels in stride-phase order (0, s, 2s, ..., 1, 1+s, ...).
inline std::int64_t phase_order(std::int64_t j, std::int64_t size, std::int64_t s) {
  for (std::int64_t r = 0; r < s; ++r) {
    const std::int64_t count = (size - r + s - 1) / s;
    if (j < count) return r + j * s;
    j -= count;
  }
  return j;  // not reached for j < size
}

template <class T>
void ChannelBlocked::forward(const T* x, const T* w, T* y, std::int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    if (bf16_) return forward_bf16(x, w, y, n);
  constexpr int M = kPixels;
  const std::int64_t C = g_.c, K = g_.k, taps = g_.kh * g_.kw, pixels = n * ho_ * wo_;
  const std::int64_t chunk = M * kChunkBlocks;
  WorkSplit::of(pixels, K, kVectors * kLanes<T>)
      .for_each(pixels, K,
                [&](std::int64_t p0, std::int64_t p_end, std::int64_t k_begin, std::int64_t k_end) {
                  // rows[b][t][m]: the input row of tap t for pixel m of block b (the zero row past
                  // the end).
                  const T** rows = this->rows<T>(omp_get_thread_num());
                  set_input_rows(x, p0, p_end, chunk, rows);
                  // Pixels of a short last block write to a spare row.
                  T spare[M][kVectors * kLanes<T>];
                  for_channel_blocks<T>(k_end - k_begin, [&]<class V, int NV>(std::int64_t k0) {
                    k0 += k_begin;
                    // Input channels in slices, so that the filter panel of a slice stays in cache
                    // while every block of the chunk passes over it.
                    for (std::int64_t c0 = 0; c0 < C; c0 += kChannelSlice)
                      for (std::int64_t p = p0; p < p_end; p += M) {
                        T* out[M];
                        for (int m = 0; m < M; ++m)
                          out[m] = p + m < p_end ? y + (p + m) * K + k0 : spare[m];
                        forward_kernel<T, V, M, NV>(rows + (p - p0) / M * taps * M, taps, C, c0,
                                                    std::min(C, c0 + kChannelSlice), w + k0, K, out,
                                                    c0 > 0);
                      }
                  });
                });
}

// forward's loops over bf16 pairs (bf16_forward.hpp): the input and filter paired first, then
// chunks of pixels by parts of the output channels, as float32's.
inline void ChannelBlocked::forward_bf16([[maybe_unused]] const float* x,
                                         [[maybe_unused]] const float* w, [[maybe_unused]] float* y,
                                         [[maybe_unused]] std::int64_t n) {
#ifdef DTNN_DIRECT_BF16
  constexpr int M = kPixels;
  constexpr std::int64_t L = bf16::kLanes;
  static_assert(kChunkBlocks % 2 == 0, "a chunk's blocks are taken two at a time");
  const std::int64_t P = pairs_, K = g_.k, taps = g_.kh * g_.kw, pixels = n * ho_ * wo_;
  const std::int64_t chunk = M * kChunkBlocks;
  std::uint32_t* xp = slice<std::uint32_t>(memory_, x_pairs_at_);
  std::uint32_t* wp = slice<std::uint32_t>(memory_, w_pairs_at_);
  bf16::to_pairs(x, n * g_.h * g_.w, g_.c, xp);
  bf16::filter_to_pairs(w, taps, g_.c, K, wp);
  WorkSplit::of(pixels, K, kVectors * L)
      .for_each(pixels, K,
                [&](std::int64_t p0, std::int64_t p_end, std::int64_t k_begin, std::int64_t k_end) {
                  const std::uint32_t** rows = this->rows<std::uint32_t>(omp_get_thread_num());
                  set_input_rows<std::uint32_t>(xp, p0, p_end, chunk, rows, P);
                  // Pixels of a short last block write to spare rows.
                  float spare[2 * M][kVectors * L];
                  auto block = [&]<int NV>(std::int64_t k0) {
                    constexpr int B = NV <= 2 ? 2 : 1;  // blocks of M pixels a kernel call takes
                    for (std::int64_t q0 = 0; q0 < P; q0 += bf16::kPairSlice)
                      for (std::int64_t p = p0; p < p_end; p += B * M) {
                        float* out[B * M];
                        for (int m = 0; m < B * M; ++m)
                          out[m] = p + m < p_end ? y + (p + m) * K + k0 : spare[m];
                        bf16::forward_kernel<M, NV, B>(rows + (p - p0) / M * taps * M, taps, P, q0,
                                                       std::min(P, q0 + bf16::kPairSlice), wp + k0,
                                                       K, out, q0 > 0);
                      }
                  };
                  bf16::for_vector_blocks<kVectors>(k_begin, k_end, block);
                });
#endif
}

template <class T>
void ChannelBlocked::backward_data(const T* dy, const T* w, T* dx, std::int64_t n) {
  constexpr int M = kPixels, NC = kVectors;
  const std::int64_t C = g_.c, K = g_.k, taps = g_.kh * g_.kw, pixels = n * g_.h * g_.w;
  const std::int64_t chunk = M * kChunkBlocks;
  WorkSplit::of(pixels, C, NC)
      .for_each(pixels, C,
                [&](std::int64_t p0, std::int64_t p_end, std::int64_t c_begin, std::int64_t c_end) {
                  // The chunk's input pixels q, in stride-phase order within each sample (so the
                  // pixels of a block mostly share the taps that reach them); past the end, repeats
                  // of the last one.
                  Pixel at[kChunkBlocks * M];
                  for (std::int64_t p = p0; p < p0 + chunk; ++p) {
                    const Pixel j = Pixel::at(std::min(p, p_end - 1), g_.h, g_.w);
                    at[p - p0] = {j.n, phase_order(j.y, g_.h, g_.stride_h),
                                  phase_order(j.x, g_.w, g_.stride_w)};
                  }
                  // rows[b][t][m]: the dy row that reaches pixel m of block b through tap t (the
                  // zero row if none does); rows[b][t][0] is null when tap t reaches no pixel of
                  // block b.
                  const T** rows = this->rows<T>(omp_get_thread_num());
                  for (std::int64_t b = 0; b < kChunkBlocks; ++b)
                    for (std::int64_t t = 0; t < taps; ++t) {
                      bool any = false;
                      const T** r = rows + (b * taps + t) * M;
                      for (int m = 0; m < M; ++m) {
                        r[m] = output_row(dy, at[b * M + m], t / g_.kw, t % g_.kw);
                        any = any || r[m];
                        if (!r[m]) r[m] = zero_row<T>();
                      }
                      if (!any) r[0] = nullptr;
                    }
                  std::int64_t c0 = c_begin;
                  auto channels = [&]<int NCB>() {
                    for (std::int64_t p = p0; p < p_end; p += M) {
                      const std::int64_t b = (p - p0) / M;
                      T sums[M][NCB];
                      T* out[M];
                      for (int m = 0; m < M; ++m) out[m] = sums[m];
                      data_kernel<T, M, NCB>(rows + b * taps * M, taps, C, w + c0 * K, K, out);
                      for (std::int64_t m = 0; m < std::min<std::int64_t>(M, p_end - p); ++m) {
                        const Pixel& q = at[b * M + m];
                        T* out = dx + ((q.n * g_.h + q.y) * g_.w + q.x) * C + c0;
                        for (int j = 0; j < NCB; ++j) out[j] = sums[m][j];
                      }
                    }
                    c0 += NCB;
                  };
                  while (c0 + NC <= c_end) channels.template operator()<NC>();
                  with_count<NC>(static_cast<int>(c_end - c0), channels);
                });
}

template <class T>
void ChannelBlocked::backward_filter(const T* x, const T* dy, T* dw, std::int64_t n) {
  if constexpr (std::is_same_v<T, float>)
    if (bf16_) return backward_filter_bf16(x, dy, dw, n);
  constexpr int MC = kPixels;
  const std::int64_t C = g_.c, K = g_.k, taps = g_.kh * g_.kw, pixels = n * ho_ * wo_;
  const std::int64_t chunk = filter_chunk();
  const std::int64_t cblocks = (C + MC - 1) / MC, blocks = taps * cblocks;
#pragma omp parallel
  {
    // This thread's blocks of dw: a contiguous run of (tap, channel block) pairs, all output
    // channels of each (so no two threads write the same element).
    const std::int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
    const std::int64_t first = blocks * me / threads, last = blocks * (me + 1) / threads;
    const T** xr = rows<T>(static_cast<int>(me));
    const T** dr = xr + chunk;
    for (std::int64_t p0 = 0; p0 < pixels && first < last; p0 += chunk) {
      const std::int64_t count = std::min(chunk, pixels - p0);
      for (std::int64_t i = 0; i < count; ++i) dr[i] = dy + (p0 + i) * K;
      std::int64_t tap = -1;
      for (std::int64_t blk = first; blk < last; ++blk) {
        const std::int64_t t = blk / cblocks, c0 = blk % cblocks * MC;
        if (t != tap) set_tap_rows(x, p0, count, tap = t, xr);
        with_count<MC>(static_cast<int>(std::min<std::int64_t>(MC, C - c0)), [&]<int MCB>() {
          for_channel_blocks<T>(K, [&]<class V, int NV>(std::int64_t k0) {
            filter_kernel<T, V, MCB, NV>(xr, c0, dr, k0, count, dw + (t * C + c0) * K + k0, K);
          });
        });
      }
    }
  }
}

// backward_filter's loops over pixel pairs (bf16_forward.hpp): x in bf16 and dy as pairs of
// pixels first, then each thread's (tap, channel block) blocks of dw over chunks of pixels.
inline void ChannelBlocked::backward_filter_bf16([[maybe_unused]] const float* x,
                                                 [[maybe_unused]] const float* dy,
                                                 [[maybe_unused]] float* dw,
                                                 [[maybe_unused]] std::int64_t n) {
#ifdef DTNN_DIRECT_BF16
  constexpr int MC = kPixels;
  const std::int64_t C = g_.c, K = g_.k, taps = g_.kh * g_.kw, pixels = n * ho_ * wo_;
  const std::int64_t chunk = filter_chunk();
  const std::int64_t cblocks = (C + MC - 1) / MC, blocks = taps * cblocks;
  auto* xb = reinterpret_cast<std::uint16_t*>(slice<std::uint32_t>(memory_, x_pairs_at_));
  std::uint32_t* dyp = slice<std::uint32_t>(memory_, dy_pairs_at_);
  pack_bf16(x, xb, n * g_.h * g_.w * C);
  bf16::row_pairs(dy, pixels, K, dyp);
#pragma omp parallel
  {
    const std::int64_t threads = omp_get_num_threads(), me = omp_get_thread_num();
    const std::int64_t first = blocks * me / threads, last = blocks * (me + 1) / threads;
    const std::uint16_t** xr = rows<std::uint16_t>(static_cast<int>(me));
    for (std::int64_t p0 = 0; p0 < pixels && first < last; p0 += chunk) {
      const std::int64_t count = std::min(chunk, pixels - p0), pairs = (count + 1) / 2;
      std::int64_t tap = -1;
      for (std::int64_t blk = first; blk < last; ++blk) {
        const std::int64_t t = blk / cblocks, c0 = blk % cblocks * MC;
        if (t != tap) {
          set_tap_rows<std::uint16_t>(xb, p0, count, tap = t, xr);
          xr[count] = nullptr;  // the second of an odd last pair
        }
        with_count<MC>(static_cast<int>(std::min<std::int64_t>(MC, C - c0)), [&]<int MCB>() {
          bf16::for_vector_blocks<kVectors>(0, K, [&]<int NV>(std::int64_t k0) {
            bf16::filter_kernel<MCB, NV>(xr, c0, dyp + p0 / 2 * K + k0, pairs,
                                         dw + (t * C + c0) * K + k0, K);
          });
        });
      }
    }
  }
#endif
}

}  // namespace DTNN_DIRECT_WIDTH
}  // namespace dtnn::direct
