// Row-major GEMM through BLIS: C[m, n] = alpha * op(A)[m, k] * op(B)[k, n] + beta * C.
// lda/ldb/ldc are row strides of the matrices as stored (before op). Small products run on one
// thread (BLIS's thread start-up costs more than they do); large ones use every thread.
#pragma once
#include <cstdint>

#include "dtnn/core_export.hpp"

namespace dtnn {

DTNN_CORE_EXPORT void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                           std::int64_t k, float alpha, const float* a, std::int64_t lda,
                           const float* b, std::int64_t ldb, float beta, float* c,
                           std::int64_t ldc);
DTNN_CORE_EXPORT void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                           std::int64_t k, double alpha, const double* a, std::int64_t lda,
                           const double* b, std::int64_t ldb, double beta, double* c,
                           std::int64_t ldc);

}  // namespace dtnn
