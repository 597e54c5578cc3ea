// The bfloat16 GEMM for CPUs with AVX512-BF16 (lowp_gemm.hpp): op(A) and op(B) rounded to bf16
// (nearest even) while packed, products summed in float32 by `vdpbf16ps`, which multiplies two
// pairs of bf16 and adds both products to a float32 lane.
//
// Goto's loops: a panel of op(B) (kKc x kNc) packed into strips of kNr columns, each pair of
// reduction rows interleaved so that one 64-byte load holds 16 columns' pairs; a block of op(A)
// (kMc x kKc) packed into strips of kMr rows (a pair is one 32-bit word, broadcast to every lane),
// a row's pairs consecutive, or a pair's rows when A is transposed. The micro-kernel keeps a
// kMr x kNr tile of C in 24 registers (12 when the tile is at most 16 columns wide). The team
// splits A blocks and B strips; a long reduction into a C of few tiles (backward-filter) is split
// over the threads instead, each summing its slice into a C of its own, added in thread order.
// The conversions and vdpbf16ps treat float32 subnormals (below 1.2e-38) as zero (gemm.hpp's
// bound says what that adds).
//
// Compiled once per instruction-set level like small_gemm_kernels.cpp (the same rules: the
// level's own namespace, no std templates); only the avx512 level has the kernel, compiled for
// AVX512-BF16 by a target attribute, and the caller runs it only after the CPU said it has that.
#include <omp.h>

#include <cstdint>
#include <cstdlib>

#include "lowp_gemm.hpp"

#if defined(__AVX512F__) && defined(__AVX512BW__)
#include <immintrin.h>
#define DTNN_BF16_KERNEL 1
#endif

namespace dtnn::detail::DTNN_ISA_VARIANT {

#ifdef DTNN_BF16_KERNEL
namespace {

#define DTNN_BF16_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

constexpr std::int64_t kMr = 12;    // rows of a C tile
constexpr std::int64_t kNr = 32;    // columns of a C tile: two vectors of 16 float32
constexpr std::int64_t kKc = 384;   // reduction depth of a packed block (even)
constexpr std::int64_t kMc = 144;   // rows of a packed A block (a multiple of kMr)
constexpr std::int64_t kNc = 3072;  // columns of a packed B panel (a multiple of kNr)

inline std::int64_t min(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

// Aligned scratch that grows once and is then reused: the training step must not allocate.
struct Buffer {
  void* data = nullptr;
  std::size_t bytes = 0;
  ~Buffer() { std::free(data); }
};
template <class T>
T* scratch(std::size_t count, Buffer& b) {
  if (b.bytes < count * sizeof(T)) {
    std::free(b.data);
    b.bytes = (count * sizeof(T) + 63) / 64 * 64;
    b.data = std::aligned_alloc(64, b.bytes);
  }
  return static_cast<T*>(b.data);
}

// 16 float32 to 16 bf16 (nearest even), in the low or high half of a 32-value vector.
DTNN_BF16_TARGET inline __m512i to_bf16_pairs(__m512 high, __m512 low) {
  return (__m512i)_mm512_cvtne2ps_pbh(high, low);  // low's 16 values first
}

// Loads the first n floats at p, at most 16 (the rest of the vector zero).
DTNN_BF16_TARGET inline __m512 load_upto(const float* p, std::int64_t n) {
  if (n >= 16) return _mm512_loadu_ps(p);
  if (n <= 0) return _mm512_setzero_ps();
  return _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << n) - 1u), p);
}

// A's rows [i0, i0 + rows) and reduction [k0, k0 + depth) as bf16 pairs, strip s of kMr rows at
// out + s * kMr * pairs (missing rows and the odd tail zero). Within a strip the word of row r and
// pair p is at r * pairs + p when A is not transposed (a row's values are consecutive in memory),
// at p * kMr + r when it is (a pair's rows are).
DTNN_BF16_TARGET void pack_a(const float* a, std::int64_t lda, bool trans, std::int64_t i0,
                             std::int64_t rows, std::int64_t k0, std::int64_t depth,
                             std::uint32_t* out) {
  const std::int64_t pairs = (depth + 1) / 2;
  const std::int64_t strips = (rows + kMr - 1) / kMr;
  for (std::int64_t s = 0; s < strips; ++s) {
    std::uint32_t* strip = out + s * kMr * pairs;
    const std::int64_t valid = min(kMr, rows - s * kMr);
    if (trans) {  // op(A)[i][kk] = a[kk][i]: a pair is two rows of a, kMr values each
      // word q of the permuted vector: (first row's q, second row's q)
      alignas(64) static const std::uint16_t kInterleave[32] = {
          0, 16, 1, 17, 2,  18, 3,  19, 4,  20, 5,  21, 6,  22, 7,  23,
          8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31};
      const __m512i interleave = _mm512_load_si512(kInterleave);
      constexpr __mmask16 kStripWords = (1u << kMr) - 1u;
      for (std::int64_t p = 0; p < pairs; ++p) {
        const float* r0 = a + (k0 + 2 * p) * lda + i0 + s * kMr;
        const __m512 first = load_upto(r0, valid);
        const __m512 second = 2 * p + 1 < depth ? load_upto(r0 + lda, valid) : _mm512_setzero_ps();
        const __m512i both = (__m512i)_mm512_cvtne2ps_pbh(second, first);
        _mm512_mask_storeu_epi32(strip + p * kMr, kStripWords,
                                 _mm512_permutexvar_epi16(interleave, both));
      }
      continue;
    }
    for (std::int64_t r = 0; r < kMr; ++r) {
      std::uint32_t* row = strip + r * pairs;
      if (r >= valid) {
        for (std::int64_t p = 0; p < pairs; ++p) row[p] = 0;
        continue;
      }
      // The row's reduction values are consecutive: 32 at a time become 16 pairs.
      const float* src = a + (i0 + s * kMr + r) * lda + k0;
      std::int64_t kk = 0;
      for (; kk + 32 <= depth; kk += 32)
        _mm512_storeu_si512(
            row + kk / 2, to_bf16_pairs(_mm512_loadu_ps(src + kk + 16), _mm512_loadu_ps(src + kk)));
      if (kk < depth) {
        const __m512i v = to_bf16_pairs(load_upto(src + kk + 16, depth - kk - 16),
                                        load_upto(src + kk, depth - kk));
        const std::int64_t words = (depth - kk + 1) / 2;
        _mm512_mask_storeu_epi32(row + kk / 2, static_cast<__mmask16>((1u << words) - 1u), v);
      }
    }
  }
}

// B's reduction rows [k0, k0 + depth) and columns [j0, j0 + cols): strip t of kNr columns at
// out + t * pairs * kNr, pair p's 32 words at + p * kNr (word j: rows 2p and 2p+1 of column j).
DTNN_BF16_TARGET void pack_b(const float* b, std::int64_t ldb, bool trans, std::int64_t k0,
                             std::int64_t depth, std::int64_t j0, std::int64_t cols,
                             std::uint32_t* out, std::int64_t strip_begin, std::int64_t strip_end) {
  const std::int64_t pairs = (depth + 1) / 2;
  // permutex2var: word q of the result's first half = (first[q], second[q]), second half q + 16.
  alignas(64) static const std::uint16_t kLowIdx[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                        37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                        11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  alignas(64) static const std::uint16_t kHighIdx[32] = {16, 48, 17, 49, 18, 50, 19, 51, 20, 52, 21,
                                                         53, 22, 54, 23, 55, 24, 56, 25, 57, 26, 58,
                                                         27, 59, 28, 60, 29, 61, 30, 62, 31, 63};
  const __m512i low_idx = _mm512_load_si512(kLowIdx), high_idx = _mm512_load_si512(kHighIdx);
  for (std::int64_t t = strip_begin; t < strip_end; ++t) {
    std::uint32_t* strip = out + t * pairs * kNr;
    const std::int64_t jt = t * kNr, width = min(kNr, cols - jt);
    if (!trans) {  // rows of B are consecutive in j: two rows' 32 values become 32 pairs
      for (std::int64_t p = 0; p < pairs; ++p) {
        const float* r0 = b + (k0 + 2 * p) * ldb + j0 + jt;
        const bool has_r1 = 2 * p + 1 < depth;
        const float* r1 = r0 + ldb;
        const __m512i first = to_bf16_pairs(load_upto(r0 + 16, width - 16), load_upto(r0, width));
        const __m512i second =
            has_r1 ? to_bf16_pairs(load_upto(r1 + 16, width - 16), load_upto(r1, width))
                   : _mm512_setzero_si512();
        _mm512_storeu_si512(strip + p * kNr, _mm512_permutex2var_epi16(first, low_idx, second));
        _mm512_storeu_si512(strip + p * kNr + 16,
                            _mm512_permutex2var_epi16(first, high_idx, second));
      }
    } else {  // op(B)[kk][j] = b[j][kk]: a column's reduction values are consecutive
      for (std::int64_t j = 0; j < kNr; ++j) {
        if (j >= width) {
          for (std::int64_t p = 0; p < pairs; ++p) strip[p * kNr + j] = 0;
          continue;
        }
        const float* src = b + (j0 + jt + j) * ldb + k0;
        alignas(64) std::uint32_t words[16];
        for (std::int64_t kk = 0; kk < depth; kk += 32) {
          const std::int64_t n = min(32, depth - kk);
          _mm512_store_si512(
              words, to_bf16_pairs(load_upto(src + kk + 16, n - 16), load_upto(src + kk, n)));
          for (std::int64_t q = 0; q < (n + 1) / 2; ++q) strip[(kk / 2 + q) * kNr + j] = words[q];
        }
      }
    }
  }
}

// C tile (rows x cols of it valid) = alpha * A strip B strip + (first ? beta * C : C); the A
// strip's word of row r and pair p at a[r * row_stride + p * pair_stride]. Halves: the tile's
// vectors of 16 columns computed (1 when cols <= 16: a narrow layer's outputs).
template <int Halves>
DTNN_BF16_TARGET void micro_kernel(std::int64_t pairs, const std::uint32_t* a,
                                   std::int64_t row_stride, std::int64_t pair_stride,
                                   const std::uint32_t* b, float* c, std::int64_t ldc,
                                   std::int64_t rows, std::int64_t cols, float alpha, float beta,
                                   bool first) {
  __m512 acc[kMr][2];
  for (int r = 0; r < kMr; ++r) acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  for (std::int64_t p = 0; p < pairs; ++p) {
    const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b + p * kNr);
    const __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + p * kNr + 16);
#pragma GCC unroll 12
    for (int r = 0; r < kMr; ++r) {
      const __m512bh av =
          (__m512bh)_mm512_set1_epi32(static_cast<int>(a[r * row_stride + p * pair_stride]));
      acc[r][0] = _mm512_dpbf16_ps(acc[r][0], av, b0);
      if constexpr (Halves == 2) acc[r][1] = _mm512_dpbf16_ps(acc[r][1], av, b1);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
  const __mmask16 m0 = static_cast<__mmask16>(cols >= 16 ? 0xFFFFu : (1u << cols) - 1u);
  const __mmask16 m1 = static_cast<__mmask16>(cols >= 32   ? 0xFFFFu
                                              : cols <= 16 ? 0u
                                                           : (1u << (cols - 16)) - 1u);
  for (int r = 0; r < kMr; ++r) {
    if (r >= rows) break;
    float* row = c + r * ldc;
    for (int h = 0; h < 2; ++h) {
      const __mmask16 mask = h == 0 ? m0 : m1;
      if (!mask) continue;
      __m512 v = _mm512_mul_ps(va, acc[r][h]);
      if (!first) {
        v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mask, row + 16 * h));
      } else if (beta != 0.0f) {  // beta == 0 never reads C (it may hold NaN)
        v = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(mask, row + 16 * h), v);
      }
      _mm512_mask_storeu_ps(row + 16 * h, mask, v);
    }
  }
}

// C = alpha op(A)[:, k0:k1] op(B)[k0:k1, :] + beta C on a team of `threads`.
DTNN_BF16_TARGET void product(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                              std::int64_t k0, std::int64_t k1, float alpha, const float* a,
                              std::int64_t lda, const float* b, std::int64_t ldb, float beta,
                              float* c, std::int64_t ldc, int threads) {
  thread_local Buffer b_panel;  // the caller's; the team packs into it
  thread_local Buffer a_block;
  for (std::int64_t jc = 0; jc < n; jc += kNc) {
    const std::int64_t nc = min(kNc, n - jc);
    const std::int64_t strips = (nc + kNr - 1) / kNr;
    for (std::int64_t pc = k0; pc < k1; pc += kKc) {
      const std::int64_t kc = min(kKc, k1 - pc), pairs = (kc + 1) / 2;
      const bool first = pc == k0;
      std::uint32_t* bp =
          scratch<std::uint32_t>(static_cast<std::size_t>(strips * pairs * kNr), b_panel);
      const std::int64_t blocks = (m + kMc - 1) / kMc;
      // Work items: every A block with every group of B strips; groups split the strips when
      // there are fewer A blocks than threads (a batch-sized M).
      const std::int64_t groups = blocks >= threads ? 1 : min(strips, threads);
      // A strip's words: row-major when A is not transposed, pair-major when it is (pack_a).
      const std::int64_t row_stride = trans_a ? 1 : pairs, pair_stride = trans_a ? kMr : 1;
#pragma omp parallel num_threads(threads)
      {
        const int t = omp_get_thread_num(), team = omp_get_num_threads();
        // Each thread packs its share of the B panel, then all wait for the whole panel.
        const std::int64_t s0 = strips * t / team, s1 = strips * (t + 1) / team;
        pack_b(b, ldb, trans_b, pc, kc, jc, nc, bp, s0, s1);
#pragma omp barrier
        std::uint32_t* ap = scratch<std::uint32_t>(static_cast<std::size_t>(kMc * pairs), a_block);
        std::int64_t packed_block = -1;
#pragma omp for schedule(static)
        for (std::int64_t item = 0; item < blocks * groups; ++item) {
          const std::int64_t block = item / groups, group = item % groups;
          const std::int64_t ic = block * kMc, mc = min(kMc, m - ic);
          if (block != packed_block) {
            pack_a(a, lda, trans_a, ic, mc, pc, kc, ap);
            packed_block = block;
          }
          const std::int64_t g0 = strips * group / groups, g1 = strips * (group + 1) / groups;
          for (std::int64_t s = 0; s < (mc + kMr - 1) / kMr; ++s)
            for (std::int64_t strip = g0; strip < g1; ++strip) {
              const std::int64_t i = ic + s * kMr, j = jc + strip * kNr;
              const std::int64_t cols = min(kNr, n - j);
              (cols <= 16 ? micro_kernel<1>
                          : micro_kernel<2>)(pairs, ap + s * kMr * pairs, row_stride, pair_stride,
                                             bp + strip * pairs * kNr, c + i * ldc + j, ldc,
                                             min(kMr, m - i), cols, alpha, beta, first);
            }
        }
      }
    }
  }
}

DTNN_BF16_TARGET void bf16_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                                std::int64_t k, float alpha, const float* a, std::int64_t lda,
                                const float* b, std::int64_t ldb, float beta, float* c,
                                std::int64_t ldc, int threads) {
  if (k == 0) {  // no products: C = beta C
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
    return;
  }
  const std::int64_t tiles = ((m + kMc - 1) / kMc) * ((n + kNr - 1) / kNr);
  if (threads < 2 || tiles >= 2 * threads || k < 4 * kKc * threads)
    return product(trans_a, trans_b, m, n, 0, k, alpha, a, lda, b, ldb, beta, c, ldc, threads);
  // A long reduction into a small C (backward-filter: C is the filter, the reduction runs over
  // every pixel of the batch): each thread takes a slice of the reduction into a C of its own, and
  // the slices' sums are added in thread order.
  thread_local Buffer partial_sums;
  float* partial = scratch<float>(static_cast<std::size_t>(threads * m * n), partial_sums);
#pragma omp parallel num_threads(threads)
  {
    const std::int64_t t = omp_get_thread_num(), team = omp_get_num_threads();
    const std::int64_t k_begin = k * t / team, k_end = k * (t + 1) / team;
    product(trans_a, trans_b, m, n, k_begin, k_end, alpha, a, lda, b, ldb, 0.0f,
            partial + t * m * n, n, 1);
#pragma omp barrier
#pragma omp for schedule(static)
    for (std::int64_t i = 0; i < m; ++i) {
      float* row = c + i * ldc;
      for (std::int64_t j = 0; j < n; ++j) {
        float sum = 0.0f;
        for (std::int64_t u = 0; u < team; ++u) sum += partial[(u * m + i) * n + j];
        row[j] = beta == 0.0f ? sum : sum + beta * row[j];
      }
    }
  }
}

}  // namespace

const Bf16GemmKernels& bf16_gemm_kernels() {
  static const Bf16GemmKernels table{&bf16_gemm};
  return table;
}

#else

const Bf16GemmKernels& bf16_gemm_kernels() {
  static const Bf16GemmKernels table{nullptr};  // below AVX-512: no vdpbf16ps
  return table;
}

#endif

}  // namespace dtnn::detail::DTNN_ISA_VARIANT
