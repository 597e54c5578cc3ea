// cuBLAS's GEMMs in dtnn's float and double, for the twins that multiply matrices (fc, attention).
// cuBLAS is column-major: a row-major [r, c] matrix with row stride ld is its column-major
// [c, r] transpose with leading dimension ld, so a row-major C = A B is the column-major
// C^T = B^T A^T, gemm(N, N) on (B, A); each caller spells its products out.
#pragma once
#include <cublas_v2.h>

#include <cstdint>

#include "check.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::cuda {

// C = alpha op(A) op(B) + beta C, column-major, on the handle's stream.
inline void gemm(cublasHandle_t h, DType dtype, cublasOperation_t ta, cublasOperation_t tb,
                 std::int64_t m, std::int64_t n, std::int64_t k, double alpha, const void* a,
                 std::int64_t lda, const void* b, std::int64_t ldb, double beta, void* c,
                 std::int64_t ldc) {
  if (dtype == DType::float64) {
    DTNN_CUBLAS(cublasDgemm(h, ta, tb, int(m), int(n), int(k), &alpha,
                            static_cast<const double*>(a), int(lda), static_cast<const double*>(b),
                            int(ldb), &beta, static_cast<double*>(c), int(ldc)));
  } else {
    const float fa = float(alpha), fb = float(beta);
    DTNN_CUBLAS(cublasSgemm(h, ta, tb, int(m), int(n), int(k), &fa, static_cast<const float*>(a),
                            int(lda), static_cast<const float*>(b), int(ldb), &fb,
                            static_cast<float*>(c), int(ldc)));
  }
}

// `count` GEMMs as above, the i-th on A + i sa, B + i sb, C + i sc (strides in elements).
inline void gemm_batched(cublasHandle_t h, DType dtype, cublasOperation_t ta, cublasOperation_t tb,
                         std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                         const void* a, std::int64_t lda, std::int64_t sa, const void* b,
                         std::int64_t ldb, std::int64_t sb, double beta, void* c, std::int64_t ldc,
                         std::int64_t sc, std::int64_t count) {
  if (dtype == DType::float64) {
    DTNN_CUBLAS(cublasDgemmStridedBatched(h, ta, tb, int(m), int(n), int(k), &alpha,
                                          static_cast<const double*>(a), int(lda), sa,
                                          static_cast<const double*>(b), int(ldb), sb, &beta,
                                          static_cast<double*>(c), int(ldc), sc, int(count)));
  } else {
    const float fa = float(alpha), fb = float(beta);
    DTNN_CUBLAS(cublasSgemmStridedBatched(h, ta, tb, int(m), int(n), int(k), &fa,
                                          static_cast<const float*>(a), int(lda), sa,
                                          static_cast<const float*>(b), int(ldb), sb, &fb,
                                          static_cast<float*>(c), int(ldc), sc, int(count)));
  }
}

}  // namespace dtnn::cuda
