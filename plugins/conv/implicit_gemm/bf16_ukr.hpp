// implicit_gemm's bf16 micro-kernel for CPUs with AVX512-BF16, in BLIS's micro-kernel form so that
// implicit_gemm.hpp's loops drive it like BLIS's own: C tile (m <= 12 rows, n <= 32 columns, at
// row stride rs_c and column stride cs_c) = alpha A B + beta C, where A is a packed panel of 12
// rows and B one of 32 columns, both turned into bf16 pairs in place by to_pairs once packed:
// word (p, i) holds values 2p and 2p + 1 of the reduction for row (column) i, and `vdpbf16ps` adds
// both of a pair's products into a float32 lane. The tile lives in 24 registers.
// Only the plugin's avx512 build has the kernel (compiled for AVX512-BF16 by a target attribute);
// available() says whether this CPU runs it. Elsewhere implicit_gemm rounds the operands instead.
#pragma once
#include <blis.h>

#include <cstdint>
#include <cstring>

#include "dtnn/precision.hpp"

// (A test may ask for the kernel in any build: DTNN_IMPLICIT_GEMM_BF16_ANY_BUILD.)
#if (defined(__AVX512F__) && defined(__AVX512BW__)) || defined(DTNN_IMPLICIT_GEMM_BF16_ANY_BUILD)
#include <immintrin.h>
#define DTNN_IMPLICIT_GEMM_BF16 1
#endif

namespace dtnn::implicit_gemm::bf16 {

// The tile and the blocking: a packed A block of kMc rows, panels kKc deep (even: whole pairs),
// a B panel of kNc columns.
inline constexpr std::int64_t kMr = 12, kNr = 32, kMc = 144, kKc = 384, kNc = 3072;

// A packed panel of `width` rows or columns and depth kc (value (p, i) at p * width + i) as bf16
// pairs in place (word (q, i) at q * width + i; a missing second value of the last pair is 0).
// Word q of every i is written after values 2q and 2q + 1 of every i are read, and before nothing
// later is read from below it.
inline void to_pairs(float* panel, std::int64_t width, std::int64_t kc) {
  const std::int64_t pairs = (kc + 1) / 2;
  for (std::int64_t q = 0; q < pairs; ++q) {
    std::uint32_t words[kNr];
    for (std::int64_t i = 0; i < width; ++i)
      words[i] = to_bf16_pair(panel[2 * q * width + i],
                              2 * q + 1 < kc ? panel[(2 * q + 1) * width + i] : 0.0f);
    std::memcpy(panel + q * width, words, static_cast<std::size_t>(width) * sizeof(std::uint32_t));
  }
}

#ifdef DTNN_IMPLICIT_GEMM_BF16

#define DTNN_IMPLICIT_GEMM_BF16_TARGET \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

inline bool available() {
  static const bool has = __builtin_cpu_supports("avx512bf16");
  return has;
}

// to_pairs with `vcvtneps2bf16` (the same rounding, to nearest even; denormals become zero), 16
// words at a time: the packing's cost beside the products', which read each word only mr or nr
// times. Both halves of word q are loaded before any is stored (word 0 overwrites values 0 and 1).
DTNN_IMPLICIT_GEMM_BF16_TARGET inline void to_pairs_fast(float* panel, std::int64_t width,
                                                         std::int64_t kc) {
  const std::int64_t pairs = (kc + 1) / 2;
  const int halves = static_cast<int>((width + 15) / 16);  // width <= kNr = 32
  __mmask16 masks[2];
  for (int h = 0; h < halves; ++h) {
    const std::int64_t left = width - 16 * h;
    masks[h] = static_cast<__mmask16>(left >= 16 ? 0xFFFFu : (1u << left) - 1u);
  }
  for (std::int64_t q = 0; q < pairs; ++q) {
    const float* first = panel + 2 * q * width;
    const bool has_second = 2 * q + 1 < kc;
    __m512i words[2];
    for (int h = 0; h < halves; ++h) {
      const __m512 x0 = _mm512_maskz_loadu_ps(masks[h], first + 16 * h);
      const __m512 x1 = has_second ? _mm512_maskz_loadu_ps(masks[h], first + width + 16 * h)
                                   : _mm512_setzero_ps();
      const __m512i lo = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(x0));
      const __m512i hi = _mm512_cvtepu16_epi32((__m256i)_mm512_cvtneps_pbh(x1));
      words[h] = _mm512_or_si512(lo, _mm512_slli_epi32(hi, 16));
    }
    for (int h = 0; h < halves; ++h)
      _mm512_mask_storeu_epi32(panel + q * width + 16 * h, masks[h], words[h]);
  }
}

DTNN_IMPLICIT_GEMM_BF16_TARGET inline void ukr(dim_t m, dim_t n, dim_t k, float* alpha, float* a,
                                               float* b, float* beta, float* c, inc_t rs_c,
                                               inc_t cs_c, auxinfo_t*, cntx_t*) {
  const std::int64_t pairs = (k + 1) / 2;
  __m512 acc[kMr][2];
  for (int r = 0; r < kMr; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (std::int64_t q = 0; q < pairs; ++q) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + q * kNr);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + q * kNr + 16);
#pragma GCC unroll 12
    for (int r = 0; r < kMr; ++r) {
      std::int32_t word;
      std::memcpy(&word, a + q * kMr + r, sizeof word);
      const __m512bh av = (__m512bh)_mm512_set1_epi32(word);
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
      acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
    }
  }
  const __m512 va = _mm512_set1_ps(*alpha);
  const float vbeta = *beta;
  if (cs_c == 1) {  // rows of C contiguous: masked vector stores
    const __mmask16 m0 = static_cast<__mmask16>(n >= 16 ? 0xFFFFu : (1u << n) - 1u);
    const __mmask16 m1 = static_cast<__mmask16>(n >= 32   ? 0xFFFFu
                                                : n <= 16 ? 0u
                                                          : (1u << (n - 16)) - 1u);
    for (int r = 0; r < m; ++r) {
      float* row = c + r * rs_c;
      for (int h = 0; h < 2; ++h) {
        const __mmask16 mask = h == 0 ? m0 : m1;
        if (!mask) continue;
        __m512 v = _mm512_mul_ps(va, acc[r][h]);
        if (vbeta != 0.0f)  // beta 0 never reads C (it may hold NaN)
          v = _mm512_fmadd_ps(_mm512_set1_ps(vbeta), _mm512_maskz_loadu_ps(mask, row + 16 * h), v);
        _mm512_mask_storeu_ps(row + 16 * h, mask, v);
      }
    }
    return;
  }
  alignas(64) float tile[kMr * kNr];
  for (int r = 0; r < kMr; ++r) {
    _mm512_store_ps(tile + r * kNr, _mm512_mul_ps(va, acc[r][0]));
    _mm512_store_ps(tile + r * kNr + 16, _mm512_mul_ps(va, acc[r][1]));
  }
  for (dim_t r = 0; r < m; ++r)
    for (dim_t j = 0; j < n; ++j) {
      float& out = c[r * rs_c + j * cs_c];
      out = vbeta == 0.0f ? tile[r * kNr + j] : tile[r * kNr + j] + vbeta * out;
    }
}

#else

inline bool available() { return false; }
inline void to_pairs_fast(float* panel, std::int64_t width, std::int64_t kc) {
  to_pairs(panel, width, kc);
}
inline void ukr(dim_t, dim_t, dim_t, float*, float*, float*, float*, float*, inc_t, inc_t,
                auxinfo_t*, cntx_t*) {}

#endif

}  // namespace dtnn::implicit_gemm::bf16
