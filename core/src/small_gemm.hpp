// Skinny products that BLIS handles poorly (an output only a few columns wide, as in the first
// convolutions of a network): register-blocked kernels, written as fixed-size loops that the
// compiler vectorises for the target CPU. Row-major, like dtnn::gemm.
//
//   nn: C[m, n] = alpha * A[m, k] * B[k, n] + beta * C     (n <= kSmallWidth or k <= kShallowDepth)
//   nt: C[m, n] = alpha * A[m, k] * B[n, k]^T + beta * C   (n <= kSmallWidth or k <= kShallowDepth)
//   tn: C[m, n] = alpha * A[k, m]^T * B[k, n] + beta * C           (n <= kSmallWidth; k may be
//   huge)
#pragma once
#include <cstdint>

namespace dtnn::detail {

inline constexpr std::int64_t kSmallWidth = 48;  // widest output one small kernel takes
// nn and nt products with a reduction this short take the small kernels at any width, in panels of
// kSmallWidth columns (BLIS's packing costs more than such a product: 64x512x10 nt ran at
// 16 GFLOPS through BLIS).
inline constexpr std::int64_t kShallowDepth = 16;

template <class T>
void small_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, T alpha,
                const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T beta, T* c,
                std::int64_t ldc);

}  // namespace dtnn::detail
