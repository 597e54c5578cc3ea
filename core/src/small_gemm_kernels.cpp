// Register-blocked small GEMM kernels (see small_gemm.hpp). A block of R rows of C times the
// padded width W lives in R*W/V vector registers (V lanes of B bytes: 32, or at the avx512 level 64
// where the CPU runs 512-bit multiply-adds at full rate, dtnn/vector_width.hpp); op(B) is packed
// once into aligned, zero-padded rows of W so every load is a whole vector (read where it is when
// its rows are W wide and one after another already).
//
// Compiled once per instruction-set level (dtnn_add_isa_variants), each time into the namespace
// DTNN_ISA_VARIANT: everything here is that level's own. No std algorithm or std template is
// called (min, fill, unique_ptr): its copy compiled for AVX-512 could be the one the linker keeps
// for every level (tests/isa_variant_symbols.cmake checks the objects for such shared symbols).
#include <omp.h>

#include <cstdlib>

#include "dtnn/gemm.hpp"
#include "dtnn/simd.hpp"
#include "dtnn/vector_width.hpp"
#include "small_gemm.hpp"

namespace dtnn::detail::DTNN_ISA_VARIANT {

namespace {

inline std::int64_t min(std::int64_t a, std::int64_t b) { return a < b ? a : b; }

using simd::kLanes;
using simd::rows_for;
using simd::Vec;
// B, the bytes of a vector, is a template parameter of everything below that holds vectors.

// Aligned scratch that grows once and is then reused: the training step must not allocate.
struct Buffer {
  void* data = nullptr;
  std::size_t bytes = 0;
  ~Buffer() { std::free(data); }
};
template <class T>
T* scratch(std::size_t count, int slot) {
  thread_local Buffer buffers[2];
  Buffer& b = buffers[slot];
  if (b.bytes < count * sizeof(T)) {
    std::free(b.data);
    b.bytes = (count * sizeof(T) + 63) / 64 * 64;
    b.data = std::aligned_alloc(64, b.bytes);
  }
  return static_cast<T*>(b.data);
}

// acc[r] += A(r, kk) * P[kk] for kk in [0, k), R rows; A(r, kk) = a[r * lda + kk * acs] and row
// kk of P starts at p + kk * ldp (NV whole vectors readable there).
template <class T, int B, int NV, int R>
[[gnu::always_inline]] inline void accumulate(Vec<T, B> (&acc)[R][NV], std::int64_t k, const T* a,
                                              std::int64_t lda, std::int64_t acs, const T* p,
                                              std::int64_t ldp) {
  constexpr int L = kLanes<T, B>;
  // (Unrolled by force: a loop left rolled indexes acc at run time, which puts it in memory.)
  for (std::int64_t kk = 0; kk < k; ++kk) {
    Vec<T, B> bv[NV];
#pragma GCC unroll 12
    for (int v = 0; v < NV; ++v) bv[v] = simd::load<T, B>(p + kk * ldp + v * L);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const T av = a[r * lda + kk * acs];
#pragma GCC unroll 12
      for (int v = 0; v < NV; ++v) acc[r][v] += av * bv[v];
    }
  }
}

// C rows [0, R) (first n columns) = alpha * acc + beta * C. Every index into acc is known at
// compile time (the loops unroll): one known only at run time keeps acc in memory, not in
// registers, for the whole accumulation (AVX2: 29 instead of 100 GFLOPS).
template <class T, int B, int NV, int R>
[[gnu::always_inline]] inline void store(const Vec<T, B> (&acc)[R][NV], std::int64_t n, T alpha,
                                         T beta, T* c, std::int64_t ldc) {
  constexpr int L = kLanes<T, B>;
  if (n >= NV * L) {  // every vector whole: the common case
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      T* cr = c + r * ldc;
#pragma GCC unroll 12
      for (int v = 0; v < NV; ++v) {
        Vec<T, B> out = acc[r][v] * alpha;
        if (beta != T(0)) out += beta * simd::load<T, B>(cr + v * L);
        simd::store<T, B>(cr + v * L, out);
      }
    }
    return;
  }
  T tile[R][NV * L];  // a narrower C: the block through memory, then its first n columns
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 12
    for (int v = 0; v < NV; ++v) simd::store<T, B>(&tile[r][v * L], acc[r][v]);
  for (int r = 0; r < R; ++r) {
    T* cr = c + r * ldc;
    if (beta == T(0)) {
      for (std::int64_t j = 0; j < n; ++j) cr[j] = alpha * tile[r][j];
    } else {
      for (std::int64_t j = 0; j < n; ++j) cr[j] = alpha * tile[r][j] + beta * cr[j];
    }
  }
}

// A deep product whose P is over kCachedPanel takes P's rows kDepthBlock at a time: a slice of
// 256 rows of up to 64 floats (64 KiB) stays in cache while every block of rows of A passes over
// it (64x512x4096 nn, 1 thread, AMD Zen 5 model 2: 105 GFLOPS in one pass, 150-163 in slices); a
// P that fits the cache whole goes in one pass (64x10x512: 98 GFLOPS, 90 in slices).
inline constexpr std::int64_t kDepthBlock = 256;
inline constexpr std::int64_t kCachedPanel = 256 << 10;

// C[m, n] = alpha * op(A)[m, k] * P[k, W] + beta * C; op(A)(i, kk) = a[i * lda + kk * acs], row kk
// of P at p + kk * ldp.
template <class T, int B, int NV>
void run_nn(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
            std::int64_t acs, const T* p, std::int64_t ldp, T beta, T* c, std::int64_t ldc) {
  constexpr int R = rows_for(NV);
  const std::int64_t blocks = m / R;
  constexpr std::int64_t kPanelBytes = NV * kLanes<T, B> * static_cast<std::int64_t>(sizeof(T));
  if (k > kDepthBlock && k * kPanelBytes > kCachedPanel) {  // deep: P in slices that stay in cache
    for (std::int64_t k0 = 0; k0 < k; k0 += kDepthBlock) {
      const std::int64_t kn = min(kDepthBlock, k - k0);
      run_nn<T, B, NV>(m, n, kn, alpha, a + k0 * acs, lda, acs, p + k0 * ldp, ldp,
                       k0 == 0 ? beta : T(1), c, ldc);
    }
    return;
  }
#pragma omp parallel for schedule(static) if (blocks * k * NV > 16384 && !omp_in_parallel())
  for (std::int64_t blk = 0; blk < blocks; ++blk) {
    Vec<T, B> acc[R][NV] = {};
    accumulate<T, B, NV, R>(acc, k, a + blk * R * lda, lda, acs, p, ldp);
    store<T, B, NV, R>(acc, n, alpha, beta, c + blk * R * ldc, ldc);
  }
  for (std::int64_t i = blocks * R; i < m; ++i) {  // the last rows, one at a time
    Vec<T, B> acc[1][NV] = {};
    accumulate<T, B, NV, 1>(acc, k, a + i * lda, lda, acs, p, ldp);
    store<T, B, NV, 1>(acc, n, alpha, beta, c + i * ldc, ldc);
  }
}

// sums[rows, W] += A[c0:c1, i0:i0+R]^T P, the R rows of C starting at i0.
template <class T, int B, int NV, int R>
[[gnu::always_inline]] inline void add_rows(Vec<T, B>* sums, std::int64_t i0, std::int64_t len,
                                            const T* a, std::int64_t lda, const T* p,
                                            std::int64_t ldp) {
  Vec<T, B> acc[R][NV];
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) acc[r][v] = sums[(i0 + r) * NV + v];
  // A^T(i0 + r, kk) = a[kk * lda + i0 + r]
  accumulate<T, B, NV, R>(acc, len, a + i0, 1, lda, p, ldp);
  for (int r = 0; r < R; ++r)
    for (int v = 0; v < NV; ++v) sums[(i0 + r) * NV + v] = acc[r][v];
}

// out[m] = column m of the 8 x 8 block in r (r[i] = row i): three rounds of pairwise shuffles.
// __builtin_shufflevector with constant lanes is the form both GCC (12+) and Clang accept.
using Vec8 = Vec<float, 32>;
[[gnu::always_inline]] inline void transpose8(const Vec8 (&r)[8], Vec8 (&out)[8]) {
  Vec8 t[8], u[8];
  for (int i = 0; i < 4; ++i) {  // t[2i], t[2i+1]: rows 2i and 2i+1 interleaved
    t[2 * i] = __builtin_shufflevector(r[2 * i], r[2 * i + 1], 0, 8, 1, 9, 4, 12, 5, 13);
    t[2 * i + 1] = __builtin_shufflevector(r[2 * i], r[2 * i + 1], 2, 10, 3, 11, 6, 14, 7, 15);
  }
  for (int h = 0; h < 2; ++h)  // rows 4h..4h+3: u[4h + c] holds columns c and c + 4
    for (int i = 0; i < 2; ++i) {
      const Vec8& x = t[4 * h + i];
      const Vec8& y = t[4 * h + 2 + i];
      u[4 * h + 2 * i] = __builtin_shufflevector(x, y, 0, 1, 8, 9, 4, 5, 12, 13);
      u[4 * h + 2 * i + 1] = __builtin_shufflevector(x, y, 2, 3, 10, 11, 6, 7, 14, 15);
    }
  for (int c = 0; c < 4; ++c) {
    out[c] = __builtin_shufflevector(u[c], u[4 + c], 0, 1, 2, 3, 8, 9, 10, 11);
    out[c + 4] = __builtin_shufflevector(u[c], u[4 + c], 4, 5, 6, 7, 12, 13, 14, 15);
  }
}

// packed[kk * W + j] = b[j * ldb + kk]: op(B) = B^T's rows, through 8 x 8 blocks in registers
// where float fills 8 lanes (a plain loop gathered one value at a time, as slow as the products
// of a 64-row C), then the edges value by value.
template <class T, int W>
void pack_transposed(const T* b, std::int64_t ldb, std::int64_t rows, std::int64_t n, T* packed) {
  std::int64_t j0 = 0, k0 = 0;
  if constexpr (sizeof(T) == 4 && simd::kVectorBytes == 32) {
    for (; j0 + 8 <= n; j0 += 8)
      for (k0 = 0; k0 + 8 <= rows; k0 += 8) {
        Vec8 r[8], c[8];
        for (int i = 0; i < 8; ++i) r[i] = simd::load<float, 32>(b + (j0 + i) * ldb + k0);
        transpose8(r, c);
        for (int m = 0; m < 8; ++m) simd::store<float, 32>(packed + (k0 + m) * W + j0, c[m]);
      }
    k0 = rows - rows % 8;
  }
  for (std::int64_t j = 0; j < n; ++j)  // what the blocks left: columns from j0, rows from k0
    for (std::int64_t kk = j < j0 ? k0 : 0; kk < rows; ++kk) packed[kk * W + j] = b[j * ldb + kk];
}

// Rows [0, rows) of op(B) (its first n columns; op(B) = B^T when trans_b) as W-wide rows at packed,
// zero past column n. Transposed, B is read along its rows, which are op(B)'s columns.
template <class T, int W>
void pack(const T* b, std::int64_t ldb, bool trans_b, std::int64_t rows, std::int64_t n,
          T* packed) {
  if (trans_b) {
    pack_transposed<T, W>(b, ldb, rows, n, packed);
  } else {
    for (std::int64_t kk = 0; kk < rows; ++kk)
      for (std::int64_t j = 0; j < n; ++j) packed[kk * W + j] = b[kk * ldb + j];
  }
  for (std::int64_t kk = 0; kk < rows; ++kk)
    for (std::int64_t j = n; j < W; ++j) packed[kk * W + j] = T(0);
}

// C[m, n] = alpha * A[k, m]^T B[k, n] + beta * C: the reduction over k is split across threads
// and walked in chunks that stay in L1 while every block of rows of C passes over them.
template <class T, int B, int NV>
void run_tn(std::int64_t m, std::int64_t n, std::int64_t k, T alpha, const T* a, std::int64_t lda,
            const T* b, std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  constexpr int W = NV * kLanes<T, B>, R = rows_for(NV);
  constexpr std::int64_t kChunk = 256;
  const int threads = (k * m * NV > 32768 && !omp_in_parallel()) ? omp_get_max_threads() : 1;
  T* partial = scratch<T>(static_cast<std::size_t>(threads) * static_cast<std::size_t>(m * W), 1);
  // B's rows read where they are when they are whole vectors one after another; rows further
  // apart (a head's slice of attention's queries or context) are packed (1 thread, AMD Zen 3,
  // operands in cache: attention's dV = P^T G, 512x32x512 tn with B's rows 512 bytes apart, 47
  // GFLOPS in place, 75 packed; within a whole layer, where P comes from memory, no change).
  const bool b_in_place = n == W && ldb == W;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const std::int64_t k0 = k * t / threads, k1 = k * (t + 1) / threads;
    auto* sums = reinterpret_cast<Vec<T, B>*>(partial + static_cast<std::int64_t>(t) * m * W);
    for (std::int64_t i = 0; i < m * NV; ++i) sums[i] = Vec<T, B>{};
    T* packed_b = b_in_place ? nullptr : scratch<T>(static_cast<std::size_t>(kChunk * W), 0);
    for (std::int64_t c0 = k0; c0 < k1; c0 += kChunk) {
      const std::int64_t len = min(k1, c0 + kChunk) - c0;
      const T* p = b + c0 * ldb;
      std::int64_t ldp = ldb;
      if (!b_in_place) {  // B rows zero-padded to W
        pack<T, W>(p, ldb, false, len, n, packed_b);
        p = packed_b;
        ldp = W;
      }
      const T* ac = a + c0 * lda;
      std::int64_t i0 = 0;
      for (; i0 + R <= m; i0 += R) add_rows<T, B, NV, R>(sums, i0, len, ac, lda, p, ldp);
      for (; i0 < m; ++i0) add_rows<T, B, NV, 1>(sums, i0, len, ac, lda, p, ldp);
    }
  }
  for (std::int64_t i = 0; i < m; ++i) {  // the threads' sums, in thread order, into the first's
    T* __restrict sum = partial + i * W;
    for (int t = 1; t < threads; ++t) {
      const T* __restrict more = partial + (static_cast<std::int64_t>(t) * m + i) * W;
      for (std::int64_t j = 0; j < n; ++j) sum[j] += more[j];
    }
    T* __restrict out = c + i * ldc;
    if (beta == T(0)) {
      for (std::int64_t j = 0; j < n; ++j) out[j] = alpha * sum[j];
    } else {
      for (std::int64_t j = 0; j < n; ++j) out[j] = alpha * sum[j] + beta * out[j];
    }
  }
}

template <class T, int B, int NV>
void run(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
         const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
         std::int64_t ldc) {
  if (trans_a && !trans_b) return run_tn<T, B, NV>(m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  constexpr int W = NV * kLanes<T, B>;
  // op(B) as [k, W] rows: B's own rows where they are whole vectors one after another, else
  // packed, zero-padded. Rows further apart were slower in place (1 thread, AMD Zen 3: attention's
  // P V at T = 512, 512x32x512 with V's rows 1.5 KiB apart, 57 GFLOPS in place, 87 packed,
  // operands in cache; in attention_bench at T = 512 its products' time fell by 17%).
  const T* p = b;
  std::int64_t ldp = ldb;
  if (trans_b || n != W || ldb != W) {
    T* packed = scratch<T>(static_cast<std::size_t>(k * W), 0);
    pack<T, W>(b, ldb, trans_b, k, n, packed);
    p = packed;
    ldp = W;
  }
  if (trans_a)
    run_nn<T, B, NV>(m, n, k, alpha, a, 1, lda, p, ldp, beta, c, ldc);  // op(A)(i, kk) = A[kk, i]
  else
    run_nn<T, B, NV>(m, n, k, alpha, a, lda, 1, p, ldp, beta, c, ldc);
}

template <class T, int B>
void small_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
                std::int64_t ldc) {
  // The widest block of columns one kernel takes: kSmallWidth, or 12 vectors where that is fewer
  // (double on 16-byte vectors: 24 columns); on 16-float vectors, 4 of them (a wide and shallow
  // product in panels of 64 columns ran 4-17% faster than in panels of 48, 1 thread, Zen 5).
  constexpr std::int64_t kNarrowPanel =
      12 * kLanes<T, B> < kSmallWidth ? 12 * kLanes<T, B> : kSmallWidth;
  constexpr std::int64_t kPanel = kLanes<T, B> == 16 ? 4 * 16 : kNarrowPanel;
  if (n > kPanel) {  // wide and shallow (nn/nt): independent column panels, one per thread
    const std::int64_t panels = (n + kPanel - 1) / kPanel;
#pragma omp parallel for schedule(static) if (m * n * k > 65536 && !omp_in_parallel())
    for (std::int64_t panel = 0; panel < panels; ++panel) {
      const std::int64_t j0 = panel * kPanel, width = min(kPanel, n - j0);
      small_gemm<T, B>(trans_a, trans_b, m, width, k, alpha, a, lda,
                       trans_b ? b + j0 * ldb : b + j0, ldb, beta, c + j0, ldc);
    }
    return;
  }
  const std::int64_t vectors = (n + kLanes<T, B> - 1) / kLanes<T, B>;
  if (vectors == 1)
    return run<T, B, 1>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (vectors == 2)
    return run<T, B, 2>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if constexpr (kLanes<T, B> == 16) {  // at most 4 vectors (kPanel)
    if (vectors == 3)
      return run<T, B, 3>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return run<T, B, 4>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {  // at most 12 (kPanel); 3 vectors take the 4-vector kernel
    if (vectors <= 4)
      return run<T, B, 4>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    if (vectors <= 6)
      return run<T, B, 6>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return run<T, B, 12>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
}

constexpr int kNarrow = simd::kVectorBytes;

#if defined(__AVX512F__)
// The avx512 level follows avx512_vector_width() on every product, not once: Family::best() keeps
// the first table this level gives, and the width may change after that until a model is built
// (every rank takes rank 0's: agree_avx512_vector_width).
template <class T>
void small_gemm_at_width(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                         T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
                         T beta, T* c, std::int64_t ldc) {
  if (avx512_vector_width().bytes == 64)
    return small_gemm<T, 64>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  small_gemm<T, kNarrow>(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
int vector_bytes() { return avx512_vector_width().bytes; }
#else
int vector_bytes() { return kNarrow; }
#endif

}  // namespace

const SmallGemmKernels& small_gemm_kernels() {
#if defined(__AVX512F__)
  static constexpr SmallGemmKernels kernels{&small_gemm_at_width<float>,
                                            &small_gemm_at_width<double>, &vector_bytes};
#else
  static constexpr SmallGemmKernels kernels{&small_gemm<float, kNarrow>,
                                            &small_gemm<double, kNarrow>, &vector_bytes};
#endif
  return kernels;
}

}  // namespace dtnn::detail::DTNN_ISA_VARIANT
