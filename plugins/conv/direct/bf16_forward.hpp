// direct's bf16 products (training.precision "bf16") for CPUs with AVX512-BF16: the channel-blocked
// forward with its input and filter as bf16 pairs along the input channels, and `vdpbf16ps`
// adding both products of a pair into a float32 lane:
//   y[p, k] = sum over taps t and pairs q of  x_t(p)[2q] w[t, 2q, k] + x_t(p)[2q + 1] w[t, 2q + 1,
//   k]
// A block of M pixels x NV vectors of 16 output channels, as the float32 kernel: a pixel's pair is
// one 32-bit word broadcast to every lane, the filter's pairs of 16 output channels one 64-byte
// load. Backward-data of stride-1 layers is that forward on dy (direct_algorithm.hpp); other
// backward-data stays float32, which is more exact than bf16 asks. Backward-filter pairs pixels
// instead: dw[t, c, k] += x_t(p)[c] dy[p, k] + x_t(p + 1)[c] dy[p + 1, k], dy's pixel pairs of 16
// output channels one load, the two pixels' x values one broadcast word.
// Only the plugin's avx512 build has the kernel (compiled for AVX512-BF16 by a target attribute);
// available() says whether this CPU runs it. Rounding is to nearest even (precision.hpp's
// to_bf16); `vdpbf16ps` treats bf16 subnormals as zero, as the bf16 GEMM does (docs/precision.md).
#pragma once
#include <cstdint>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/precision.hpp"
#include "width.hpp"
#include "with_count.hpp"

#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#define DTNN_DIRECT_BF16 1
#endif

namespace dtnn::direct {
inline namespace DTNN_DIRECT_WIDTH {
namespace bf16 {

inline constexpr std::int64_t kLanes = 16;       // float32 lanes of a 64-byte vector
inline constexpr std::int64_t kPairSlice = 128;  // pairs of input channels per filter panel

// Rows of `channels` float32 values as rows of (channels + 1) / 2 words, word q of a row holding
// values 2q and 2q + 1 rounded to bf16 (the second 0 past the end of an odd row).
inline void to_pairs(const float* x, std::int64_t rows, std::int64_t channels, std::uint32_t* out) {
  const std::int64_t pairs = (channels + 1) / 2;
  if (channels % 2 == 0) {  // the words are the row's bf16 values in order
    pack_bf16(x, reinterpret_cast<std::uint16_t*>(out), rows * channels);
    return;
  }
  parallel_for(rows, 64, [&](std::int64_t r) {
    const float* in = x + r * channels;
    std::uint32_t* words = out + r * pairs;
    for (std::int64_t q = 0; q < pairs; ++q)
      words[q] = to_bf16_pair(in[2 * q], 2 * q + 1 < channels ? in[2 * q + 1] : 0.0f);
  });
}

// A matrix [rows, width] as words [(rows + 1) / 2, width]: word (i, k) holds rows 2i and 2i + 1 at
// column k rounded to bf16 (the second 0 past the last row). backward-filter pairs dy's pixels so.
inline void row_pairs(const float* src, std::int64_t rows, std::int64_t width, std::uint32_t* out) {
  parallel_for((rows + 1) / 2, 16, [&](std::int64_t i) {
    const float* first = src + 2 * i * width;
    const bool second = 2 * i + 1 < rows;
    std::uint32_t* words = out + i * width;
    for (std::int64_t k = 0; k < width; ++k)
      words[k] = to_bf16_pair(first[k], second ? first[width + k] : 0.0f);
  });
}

// The filter [taps, C, K] as words [taps, pairs, K]: each tap's [C, K] paired along C.
inline void filter_to_pairs(const float* w, std::int64_t taps, std::int64_t C, std::int64_t K,
                            std::uint32_t* out) {
  const std::int64_t pairs = (C + 1) / 2;
  for (std::int64_t t = 0; t < taps; ++t) row_pairs(w + t * C * K, C, K, out + t * pairs * K);
}

// f.template operator()<NV>(k0) over output channels [begin, end) (whole vectors of kLanes) in
// blocks of at most N vectors.
template <int N, class F>
inline void for_vector_blocks(std::int64_t begin, std::int64_t end, F&& f) {
  std::int64_t k0 = begin;
  for (; k0 + N * kLanes <= end; k0 += N * kLanes) f.template operator()<N>(k0);
  with_count<N>(static_cast<int>((end - k0) / kLanes),
                [&]<int NV>() { f.template operator()<NV>(k0); });
}

#ifdef DTNN_DIRECT_BF16

#define DTNN_DIRECT_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

inline bool available() {
  static const bool has = __builtin_cpu_supports("avx512bf16");
  return has;
}

// out[b M + m][16 j + l] (+)= sum over taps t and pairs q in [q0, q1) of the products of
// rows[(b taps + t) M + m][q] and w[(t * pairs + q) * K + 16 j + l], for B blocks of M pixels,
// j < NV, l < 16; added to what out holds when accumulate is set. Two blocks where the output
// channels are one or two vectors, so that at least 12 sums are in flight.
template <int M, int NV, int B>
DTNN_DIRECT_BF16_TARGET void forward_kernel(const std::uint32_t* const* rows, std::int64_t taps,
                                            std::int64_t pairs, std::int64_t q0, std::int64_t q1,
                                            const std::uint32_t* w, std::int64_t K,
                                            float* const* out, bool accumulate) {
  __m512 acc[B * M][NV];
  for (int m = 0; m < B * M; ++m)
    for (int j = 0; j < NV; ++j)
      acc[m][j] = accumulate ? _mm512_loadu_ps(out[m] + j * kLanes) : _mm512_setzero_ps();
  for (std::int64_t t = 0; t < taps; ++t) {
    const std::uint32_t* const* r[B];
    for (int b = 0; b < B; ++b) r[b] = rows + (b * taps + t) * M;
    const std::uint32_t* wt = w + t * pairs * K;
    for (std::int64_t q = q0; q < q1; ++q) {
      __m512bh wv[NV];
      for (int j = 0; j < NV; ++j) wv[j] = (__m512bh)_mm512_loadu_si512(wt + q * K + j * kLanes);
      for (int b = 0; b < B; ++b)
        for (int m = 0; m < M; ++m) {
          const __m512bh xv = (__m512bh)_mm512_set1_epi32(static_cast<int>(r[b][m][q]));
          for (int j = 0; j < NV; ++j)
            acc[b * M + m][j] = _mm512_dpbf16_ps(acc[b * M + m][j], xv, wv[j]);
        }
    }
  }
  for (int m = 0; m < B * M; ++m)
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(out[m] + j * kLanes, acc[m][j]);
}

// dw[c * K + 16 j + l] += sum over pixel pairs i < pairs of x[2i][xo + c] dy_pairs[i K + 16 j + l]
// (low halves) + x[2i + 1][xo + c] (high halves), for c < MC, j < NV: x holds bf16 rows (null:
// padding, or past the last pixel), dy_pairs row_pairs' words of dy from this chunk's first pair.
template <int MC, int NV>
DTNN_DIRECT_BF16_TARGET void filter_kernel(const std::uint16_t* const* x, std::int64_t xo,
                                           const std::uint32_t* dy_pairs, std::int64_t pairs,
                                           float* dw, std::int64_t K) {
  __m512 acc[MC][NV];
  for (int c = 0; c < MC; ++c)
    for (int j = 0; j < NV; ++j) acc[c][j] = _mm512_loadu_ps(dw + c * K + j * kLanes);
  for (std::int64_t i = 0; i < pairs; ++i) {
    const std::uint16_t* a = x[2 * i];
    const std::uint16_t* b = x[2 * i + 1];
    if (!a && !b) continue;
    __m512bh d[NV];
    for (int j = 0; j < NV; ++j) d[j] = (__m512bh)_mm512_loadu_si512(dy_pairs + i * K + j * kLanes);
    for (int c = 0; c < MC; ++c) {
      const std::uint32_t word =
          (a ? std::uint32_t{a[xo + c]} : 0u) | (b ? std::uint32_t{b[xo + c]} << 16 : 0u);
      const __m512bh xv = (__m512bh)_mm512_set1_epi32(static_cast<int>(word));
      for (int j = 0; j < NV; ++j) acc[c][j] = _mm512_dpbf16_ps(acc[c][j], xv, d[j]);
    }
  }
  for (int c = 0; c < MC; ++c)
    for (int j = 0; j < NV; ++j) _mm512_storeu_ps(dw + c * K + j * kLanes, acc[c][j]);
}

#else

inline bool available() { return false; }

#endif

// Whether a float32 layer of geometry g runs its forward here: bf16 products asked for, the CPU
// has the kernel, and whole vectors of output channels.
inline bool runs(const ConvGeometry& g) {
  return g.precision == Precision::bf16 && g.dtype == DType::float32 && g.k % kLanes == 0 &&
         available();
}

}  // namespace bf16
}  // namespace DTNN_DIRECT_WIDTH
}  // namespace dtnn::direct
