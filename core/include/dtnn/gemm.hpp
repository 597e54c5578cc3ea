// Row-major GEMM through BLIS: C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] + beta * C.
// lda/ldb/ldc are row strides of the matrices as stored (before op). Small products run on one
// thread (BLIS's thread start-up costs more than they do); large ones use every thread.
#pragma once
#include <cstdint>

#include "dtnn/core_export.hpp"
#include "dtnn/isa.hpp"

namespace dtnn {

DTNN_CORE_EXPORT void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                           std::int64_t k, float alpha, const float* a, std::int64_t lda,
                           const float* b, std::int64_t ldb, float beta, float* c,
                           std::int64_t ldc);
DTNN_CORE_EXPORT void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                           std::int64_t k, double alpha, const double* a, std::int64_t lda,
                           const double* b, std::int64_t ldb, double beta, double* c,
                           std::int64_t ldc);

// The register-blocked kernels gemm runs for skinny products (an output at most 48 columns wide,
// or a reduction at most 16 deep), one variant per instruction-set level: gemm takes the best this
// process runs; a test can run each (small_gemm_kernels().at(level)). Same arguments as gemm.
struct SmallGemmKernels {
  void (*f32)(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
              float alpha, const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
              float beta, float* c, std::int64_t ldc);
  void (*f64)(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
              double alpha, const double* a, std::int64_t lda, const double* b, std::int64_t ldb,
              double beta, double* c, std::int64_t ldc);
};
DTNN_CORE_EXPORT const isa::Family<SmallGemmKernels>& small_gemm_kernels();

}  // namespace dtnn
