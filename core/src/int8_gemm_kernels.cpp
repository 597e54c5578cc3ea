// The int8 product's kernels (dtnn/int8_gemm.hpp), compiled once per instruction-set level like
// small_gemm_kernels.cpp (the level's own namespace, no std templates):
//
// - loops: a strip of 32 columns and 4 rows of int32 sums at a time, each packed group of four
//   reduction rows read once per strip row; the compiler vectorises the column loop for the level.
// - vnni (avx512 only, compiled for AVX512-VNNI by a target attribute; the caller runs it only
// after
//   the CPU said it has that): a tile of up to 12 rows x 32 columns of sums in 24 registers; per
//   group of four reduction rows, two 64-byte loads of B (16 columns x 4 bytes each) and, per row,
//   A's four bytes broadcast to every lane, `vpdpbusd` adding the four u8 x s8 products of each
//   lane into its int32. The epilogue converts in registers and stores the floats (masked at the
//   edge). Rows go in blocks of kMc so that a block of A stays in the cache while the strips of B
//   pass.
// Both walk A's runs (Int8Rows) in order, B's groups one after the other.
#include "int8_gemm_kernels.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX2__)
#include <immintrin.h>
#define DTNN_INT8_AVX2_KERNEL 1
#endif
#if defined(__AVX512F__) && defined(__AVX512BW__)
#define DTNN_INT8_VNNI_KERNEL 1
#endif

namespace dtnn::detail::DTNN_ISA_VARIANT {

namespace {

inline std::int64_t min(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

inline float finish(std::int32_t sum, const Int8Epilogue& e, std::int64_t j) {
  const float v =
      std::fma(static_cast<float>(sum + e.offset[j]), e.scale[j], e.bias ? e.bias[j] : 0.0f);
  return e.relu && !(v > 0.0f) ? 0.0f : v;
}

void loops(std::int64_t m, std::int64_t n, const Int8Rows& a, const std::int8_t* packed_b,
           const Int8Epilogue& e, float* y, std::int64_t ldy) {
  constexpr std::int64_t kRows = 4, kCols = 32;
  const std::int64_t pn = int8_padded_n(n);
  for (std::int64_t j0 = 0; j0 < n; j0 += kCols) {
    const std::int64_t cols = min(kCols, n - j0);
    for (std::int64_t i0 = 0; i0 < m; i0 += kRows) {
      const std::int64_t rows = min(kRows, m - i0);
      std::int32_t acc[kRows][kCols] = {};
      const std::int8_t* bg = packed_b + j0 * 4;
      for (std::int64_t s = 0; s < a.segments; ++s)
        for (std::int64_t g = 0; g < a.segment_groups; ++g, bg += pn * 4) {
          for (std::int64_t r = 0; r < rows; ++r) {
            const std::uint8_t* ar = a.a + (i0 + r) * a.lda + s * a.segment_stride + 4 * g;
            const std::int32_t a0 = ar[0], a1 = ar[1], a2 = ar[2], a3 = ar[3];
            std::int32_t* __restrict sums = acc[r];
            const std::int8_t* __restrict b = bg;
            for (std::int64_t c = 0; c < kCols; ++c)
              sums[c] += a0 * b[4 * c] + a1 * b[4 * c + 1] + a2 * b[4 * c + 2] + a3 * b[4 * c + 3];
          }
        }
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c)
          y[(i0 + r) * ldy + j0 + c] = finish(acc[r][c], e, j0 + c);
    }
  }
}

#ifdef DTNN_INT8_AVX2_KERNEL

constexpr std::int64_t kAvx2Mr = 4;   // rows of a tile
constexpr std::int64_t kAvx2Nr = 16;  // columns of a tile: two vectors of 8 int32

// Rows [0, MR) of A times columns [j0, j0 + 8 NV) of packed B, into y (cols of them). The sums
// are of (code - 128) x b, so the epilogue's offset is not added.
template <int MR, int NV>
void avx2_tile(const Int8Rows& rows, const std::int8_t* b, std::int64_t pn, const Int8Epilogue& e,
               std::int64_t j0, std::int64_t cols, float* y, std::int64_t ldy) {
  __m256i acc[MR][NV];
#pragma GCC unroll 4
  for (int r = 0; r < MR; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_si256();
  const __m256i ones = _mm256_set1_epi16(1);
  const std::int8_t* bg = b + j0 * 4;
  for (std::int64_t s = 0; s < rows.segments; ++s) {
    const std::uint8_t* as = rows.a + s * rows.segment_stride;
    for (std::int64_t g = 0; g < rows.segment_groups; ++g, bg += pn * 4, as += 4) {
      __m256i bv[NV], magnitude[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) {
        bv[v] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(bg + 32 * v));
        magnitude[v] = _mm256_abs_epi8(bv[v]);
      }
#pragma GCC unroll 4
      for (int r = 0; r < MR; ++r) {
        std::uint32_t word;
        std::memcpy(&word, as + r * rows.lda, 4);
        const __m256i q = _mm256_set1_epi32(static_cast<std::int32_t>(word ^ 0x80808080u));
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) {
          const __m256i pairs = _mm256_maddubs_epi16(magnitude[v], _mm256_sign_epi8(q, bv[v]));
          acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(pairs, ones));
        }
      }
    }
  }
  for (int v = 0; v < NV; ++v) {
    const std::int64_t valid = min(8, cols - 8 * v);
    alignas(32) float scale[8] = {}, bias[8] = {};
    for (std::int64_t c = 0; c < valid; ++c) {
      scale[c] = e.scale[j0 + 8 * v + c];
      bias[c] = e.bias ? e.bias[j0 + 8 * v + c] : 0.0f;
    }
    const __m256 sv = _mm256_load_ps(scale), bias_v = _mm256_load_ps(bias);
    for (int r = 0; r < MR; ++r) {
      __m256 out = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[r][v]), sv, bias_v);
      if (e.relu) out = _mm256_max_ps(out, _mm256_setzero_ps());
      float* to = y + r * ldy + j0 + 8 * v;
      if (valid == 8) {
        _mm256_storeu_ps(to, out);
      } else {
        alignas(32) float part[8];
        _mm256_store_ps(part, out);
        for (std::int64_t c = 0; c < valid; ++c) to[c] = part[c];
      }
    }
  }
}

using Avx2Tile = void (*)(const Int8Rows&, const std::int8_t*, std::int64_t, const Int8Epilogue&,
                          std::int64_t, std::int64_t, float*, std::int64_t);

Avx2Tile avx2_tile_of(std::int64_t rows, std::int64_t nv) {
  static constexpr Avx2Tile kTiles[4][2] = {{&avx2_tile<1, 1>, &avx2_tile<1, 2>},
                                            {&avx2_tile<2, 1>, &avx2_tile<2, 2>},
                                            {&avx2_tile<3, 1>, &avx2_tile<3, 2>},
                                            {&avx2_tile<4, 1>, &avx2_tile<4, 2>}};
  return kTiles[rows - 1][nv - 1];
}

// The sign trick keeps vpmaddubsw's 16-bit pair sums exact: |b| (at most 127) times q with b's sign
// (q = code - 128 in [-127, 127]) gives products of at most 16,129, pairs of at most 32,258.
void avx2(std::int64_t m, std::int64_t n, const Int8Rows& a, const std::int8_t* packed_b,
          const Int8Epilogue& e, float* y, std::int64_t ldy) {
  constexpr std::int64_t kMc = 96;
  const std::int64_t pn = int8_padded_n(n);
  Int8Rows rows = a;
  for (std::int64_t i0 = 0; i0 < m; i0 += kMc) {
    const std::int64_t block = min(kMc, m - i0);
    for (std::int64_t j0 = 0; j0 < n; j0 += kAvx2Nr) {
      const std::int64_t cols = min(kAvx2Nr, n - j0), nv = cols > 8 ? 2 : 1;
      for (std::int64_t i = i0; i < i0 + block; i += kAvx2Mr) {
        rows.a = a.a + i * a.lda;
        avx2_tile_of(min(kAvx2Mr, i0 + block - i), nv)(rows, packed_b, pn, e, j0, cols, y + i * ldy,
                                                       ldy);
      }
    }
  }
}

#endif

#ifdef DTNN_INT8_VNNI_KERNEL

// GCC 12 warns that the conversions' unused pass-through operand (_mm512_undefined_ps) is
// uninitialised: it is undefined on purpose.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#define DTNN_VNNI_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni")))

constexpr std::int64_t kMr = 12;  // rows of a tile
constexpr std::int64_t kNr = 32;  // columns of a tile: two vectors of 16 int32
constexpr std::int64_t kMc = 96;  // rows of A per block (a multiple of kMr)

DTNN_VNNI_TARGET inline __mmask16 first(std::int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xffff)
                     : static_cast<__mmask16>((1u << (count > 0 ? count : 0)) - 1u);
}

// Rows [0, MR) of A (rows.a pointing at the first) times columns [j0, j0 + 16 NV) of packed B,
// written to y (cols of them).
template <int MR, int NV>
DTNN_VNNI_TARGET void tile(const Int8Rows& rows, const std::int8_t* b, std::int64_t pn,
                           const Int8Epilogue& e, std::int64_t j0, std::int64_t cols, float* y,
                           std::int64_t ldy) {
  __m512i acc[MR][NV];
  __mmask16 mask[NV];
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    mask[v] = first(cols - 16 * v);
    const __m512i offset = _mm512_maskz_loadu_epi32(mask[v], e.offset + j0 + 16 * v);
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) acc[r][v] = offset;
  }
  const std::int8_t* bg = b + j0 * 4;
  const std::int64_t lda = rows.lda;
  for (std::int64_t s = 0; s < rows.segments; ++s) {
    const std::uint8_t* as = rows.a + s * rows.segment_stride;
    for (std::int64_t g = 0; g < rows.segment_groups; ++g, bg += pn * 4, as += 4) {
      __m512i bv[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_si512(bg + 64 * v);
#pragma GCC unroll 12
      for (int r = 0; r < MR; ++r) {
        std::int32_t word;
        std::memcpy(&word, as + r * lda, 4);
        const __m512i av = _mm512_set1_epi32(word);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], av, bv[v]);
      }
    }
  }
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    const __m512 scale = _mm512_maskz_loadu_ps(mask[v], e.scale + j0 + 16 * v);
    const __m512 bias =
        e.bias ? _mm512_maskz_loadu_ps(mask[v], e.bias + j0 + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 12
    for (int r = 0; r < MR; ++r) {
      __m512 out = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][v]), scale, bias);
      if (e.relu) out = _mm512_max_ps(out, _mm512_setzero_ps());
      _mm512_mask_storeu_ps(y + r * ldy + j0 + 16 * v, mask[v], out);
    }
  }
}

using Tile = void (*)(const Int8Rows&, const std::int8_t*, std::int64_t, const Int8Epilogue&,
                      std::int64_t, std::int64_t, float*, std::int64_t);

// The tile of rows x (16 nv) columns.
Tile tile_of(std::int64_t rows, std::int64_t nv) {
  static constexpr Tile kTiles[kMr][2] = {
      {&tile<1, 1>, &tile<1, 2>},   {&tile<2, 1>, &tile<2, 2>},   {&tile<3, 1>, &tile<3, 2>},
      {&tile<4, 1>, &tile<4, 2>},   {&tile<5, 1>, &tile<5, 2>},   {&tile<6, 1>, &tile<6, 2>},
      {&tile<7, 1>, &tile<7, 2>},   {&tile<8, 1>, &tile<8, 2>},   {&tile<9, 1>, &tile<9, 2>},
      {&tile<10, 1>, &tile<10, 2>}, {&tile<11, 1>, &tile<11, 2>}, {&tile<12, 1>, &tile<12, 2>}};
  return kTiles[rows - 1][nv - 1];
}

void vnni(std::int64_t m, std::int64_t n, const Int8Rows& a, const std::int8_t* packed_b,
          const Int8Epilogue& e, float* y, std::int64_t ldy) {
  const std::int64_t pn = int8_padded_n(n);
  Int8Rows rows = a;
  for (std::int64_t i0 = 0; i0 < m; i0 += kMc) {
    const std::int64_t block = min(kMc, m - i0);
    for (std::int64_t j0 = 0; j0 < n; j0 += kNr) {
      const std::int64_t cols = min(kNr, n - j0);
      const std::int64_t nv = cols > 16 ? 2 : 1;
      for (std::int64_t i = i0; i < i0 + block; i += kMr) {
        const std::int64_t count = min(kMr, i0 + block - i);
        rows.a = a.a + i * a.lda;
        tile_of(count, nv)(rows, packed_b, pn, e, j0, cols, y + i * ldy, ldy);
      }
    }
  }
}

#endif

}  // namespace

const Int8GemmKernels& int8_gemm_kernels() {
#if defined(DTNN_INT8_VNNI_KERNEL)
  static const Int8GemmKernels table{&loops, &avx2, &vnni};
#elif defined(DTNN_INT8_AVX2_KERNEL)
  static const Int8GemmKernels table{&loops, &avx2, nullptr};
#else
  static const Int8GemmKernels table{&loops, nullptr, nullptr};
#endif
  return table;
}

}  // namespace dtnn::detail::DTNN_ISA_VARIANT
