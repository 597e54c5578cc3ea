// Row-major GEMM through BLIS: C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] + beta * C.
// lda/ldb/ldc are row strides of the matrices as stored (before op). Small products run on one
// thread (BLIS's thread start-up costs more than they do); large ones use every thread.
#pragma once
#include <cstdint>

#include "dtnn/core_export.hpp"
#include "dtnn/isa.hpp"
#include "dtnn/precision.hpp"

namespace dtnn {

DTNN_CORE_EXPORT void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                           std::int64_t k, float alpha, const float* a, std::int64_t lda,
                           const float* b, std::int64_t ldb, float beta, float* c,
                           std::int64_t ldc);
DTNN_CORE_EXPORT void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                           std::int64_t k, double alpha, const double* a, std::int64_t lda,
                           const double* b, std::int64_t ldb, double beta, double* c,
                           std::int64_t ldc);

// Which of the products gemm hands to BLIS may go to BLIS's small/unpacked ("sup") kernels, in
// words, for `dtnn info`: by default those of few rows (gemm.cpp's measurements); the environment
// variable DTNN_BLIS_SUP=blis leaves it to BLIS's own thresholds, =off packs every product.
DTNN_CORE_EXPORT const char* blis_sup_policy();

// The register-blocked kernels gemm runs for skinny products (an output at most kSmallGemmWidth
// columns wide, or a reduction at most kSmallGemmDepth deep, or, on 16-float vectors, a float nt
// product at most kSmallGemmRows rows long: a batch through fc's backward-data), one variant per
// instruction-set level: gemm takes the best this process runs; a test can run each
// (small_gemm_kernels().at(level)). Same arguments as gemm; vector_bytes(), the width the level's
// table runs on now (at the avx512 level, avx512_vector_width()'s on each product).
inline constexpr std::int64_t kSmallGemmWidth = 48;
inline constexpr std::int64_t kSmallGemmDepth = 64;
inline constexpr std::int64_t kSmallGemmRows = 128;
struct SmallGemmKernels {
  void (*f32)(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
              float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
              float beta, float* c, std::int64_t ldc);
  void (*f64)(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
              double alpha, const double* a, std::int64_t lda, const double* b, std::int64_t ldb,
              double beta, double* c, std::int64_t ldc);
  int (*vector_bytes)();
};
DTNN_CORE_EXPORT const isa::Family<SmallGemmKernels>& small_gemm_kernels();

// The same product in precision p (precision.hpp): op(A) and op(B) rounded to p, the products
// summed in float32 (float64 for double); alpha, beta and C stay as they are. fp32 is gemm above.
// bf16 runs `vdpbf16ps` kernels where the CPU has AVX512-BF16 (bf16_gemm_kernels()); otherwise,
// and for fp16, the rounded operands are copied and go through the float32 GEMM: the same
// arithmetic, the float32 speed. Either way |C - C_exact| <= (2u + u^2 + (k + 2) 2^-24) *
// (|alpha| |op(A)| |op(B)|) + |beta C| 2^-24 elementwise, u = unit_roundoff(p), k the reduction
// (the bf16 kernel reads float32 subnormals as zero: at most 2^-126 |alpha| sum |op(B)| more).
DTNN_CORE_EXPORT void gemm(Precision p, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                           std::int64_t k, float alpha, const float* a, std::int64_t lda,
                           const float* b, std::int64_t ldb, float beta, float* c,
                           std::int64_t ldc);
DTNN_CORE_EXPORT void gemm(Precision p, bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                           std::int64_t k, double alpha, const double* a, std::int64_t lda,
                           const double* b, std::int64_t ldb, double beta, double* c,
                           std::int64_t ldc);

// The bf16 kernel of an instruction-set level (null below avx512; above it, it still needs a CPU
// with AVX512-BF16: bf16_gemm_kernel() checks both). `threads`: the team it runs on.
struct Bf16GemmKernels {
  void (*f32)(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
              float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
              float beta, float* c, std::int64_t ldc, int threads);
};
DTNN_CORE_EXPORT const isa::Family<Bf16GemmKernels>& bf16_gemm_kernels();
// The bf16 kernel this process runs (the CPU has AVX512-BF16, the ceiling allows avx512), or null.
DTNN_CORE_EXPORT decltype(Bf16GemmKernels::f32) bf16_gemm_kernel();
// What gemm(p, ...) runs here, for `dtnn info` and dtnn_bench: "vdpbf16ps kernels on AVX512-BF16"
// or "rounded operands, float32 GEMM".
DTNN_CORE_EXPORT const char* lowp_gemm_path(Precision p);

}  // namespace dtnn
