// gemm in a lower precision (gemm.hpp): the bf16 kernel where the CPU runs it, else the operands
// rounded into scratch copies and the float32 (or float64) GEMM on those.
#include "lowp_gemm.hpp"

#include <cstdlib>
#include <type_traits>

#include "dtnn/gemm.hpp"
#include "dtnn/memory.hpp"

namespace dtnn {

namespace {

const isa::Family<Bf16GemmKernels> kBf16Gemm(
    "core/bf16_gemm", {
                          {isa::Level::portable, &detail::portable::bf16_gemm_kernels},
#ifdef DTNN_HAVE_ISA_avx2
                          {isa::Level::avx2, &detail::avx2::bf16_gemm_kernels},
#endif
#ifdef DTNN_HAVE_ISA_avx512
                          {isa::Level::avx512, &detail::avx512::bf16_gemm_kernels},
#endif
                      });

bool cpu_has_avx512_bf16() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx512bf16");
  return has;
#else
  return false;
#endif
}

// Aligned scratch that grows once per thread and is then reused (the step must not allocate).
struct Scratch {
  void* data = nullptr;
  std::size_t bytes = 0;
  ~Scratch() { std::free(data); }
  template <class T>
  T* get(std::size_t count) {
    if (bytes < count * sizeof(T)) {
      std::free(data);
      data = nullptr, bytes = 0;  // allocate_aligned throws rather than return null
      data = allocate_aligned(count * sizeof(T));
      bytes = count * sizeof(T);
    }
    return static_cast<T*>(data);
  }
};

// The rows x cols matrix at src (row stride ld), rounded to p, compact in dst.
template <class T>
void round_matrix(Precision p, const T* src, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                  T* dst) {
  if (ld == cols) {
    round_to(p, src, dst, rows * cols);
    return;
  }
  for (std::int64_t r = 0; r < rows; ++r) round_to(p, src + r * ld, dst + r * cols, cols);
}

template <class T>
void rounded_gemm(Precision p, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, T alpha, const T* a, std::int64_t lda, const T* b,
                  std::int64_t ldb, T beta, T* c, std::int64_t ldc) {
  thread_local Scratch a_copy, b_copy;
  // As stored: A is m x k (k x m transposed), B is k x n (n x k transposed).
  const std::int64_t a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
  const std::int64_t b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
  T* ra = a_copy.get<T>(static_cast<std::size_t>(m * k));
  T* rb = b_copy.get<T>(static_cast<std::size_t>(k * n));
  round_matrix(p, a, lda, a_rows, a_cols, ra);
  round_matrix(p, b, ldb, b_rows, b_cols, rb);
  gemm(trans_a, trans_b, m, n, k, alpha, ra, a_cols, rb, b_cols, beta, c, ldc);
}

}  // namespace

const isa::Family<Bf16GemmKernels>& bf16_gemm_kernels() { return kBf16Gemm; }

decltype(Bf16GemmKernels::f32) bf16_gemm_kernel() {
  if (!cpu_has_avx512_bf16()) return nullptr;
  return kBf16Gemm.best().f32;
}

const char* lowp_gemm_path(Precision p) {
  if (p == Precision::fp32) return "float32 GEMM";
  if (p == Precision::bf16 && bf16_gemm_kernel()) return "vdpbf16ps kernels on AVX512-BF16";
  return "rounded operands, float32 GEMM";
}

namespace {
template <class T>
void gemm_in(Precision p, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
             std::int64_t k, T alpha, const T* a, std::int64_t lda, const T* b, std::int64_t ldb,
             T beta, T* c, std::int64_t ldc) {
  if (p == Precision::fp32)
    return gemm(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  if (m == 0 || n == 0) return;
  // Outputs narrower than a vector of 16 leave most of the kernel's 32-wide tile idle: there the
  // float32 GEMM's small kernels on rounded copies are faster (43264x4x9: 27 against 18 GFLOPS,
  // bench/gemm_bench on Zen 5).
  if constexpr (std::is_same_v<T, float>)
    if (p == Precision::bf16 && n >= 16)
      if (auto kernel = bf16_gemm_kernel())
        return kernel(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc,
                      detail::gemm_threads(m, n, k));
  rounded_gemm(p, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
}  // namespace

void gemm(Precision p, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
          float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
          float beta, float* c, std::int64_t ldc) {
  gemm_in(p, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(Precision p, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
          double alpha, const double* a, std::int64_t lda, const double* b, std::int64_t ldb,
          double beta, double* c, std::int64_t ldc) {
  gemm_in(p, trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace dtnn
