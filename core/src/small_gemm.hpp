// Skinny products that BLIS handles poorly (an output only a few columns wide, as in the first
// convolutions of a network): register-blocked kernels, written as fixed-size loops that the
// compiler vectorises, one variant per instruction-set level (small_gemm_kernels.cpp; the family
// is dtnn::small_gemm_kernels()). Row-major, like dtnn::gemm.
//
//   nn: C[m, n] = alpha * A[m, k] * B[k, n] + beta * C     (n <= kSmallWidth or k <= kShallowDepth)
//   nt: C[m, n] = alpha * A[m, k] * B[n, k]^T + beta * C   (n <= kSmallWidth or k <= kShallowDepth)
//   tn: C[m, n] = alpha * A[k, m]^T * B[k, n] + beta * C           (n <= kSmallWidth; k may be
//   huge)
#pragma once
#include <cstdint>

#include "dtnn/gemm.hpp"

namespace dtnn::detail {

inline constexpr std::int64_t kSmallWidth = kSmallGemmWidth;  // widest output one kernel takes
// nn and nt products with a reduction this short take the small kernels at any width, in panels of
// kSmallWidth columns: BLIS's packing and its C tiles' loads and stores cost more than such a
// product (1 thread, AMD Zen 5: 64x512x10 nt 16 GFLOPS through BLIS; attention's scores, 512x512x32
// nt, 46 through BLIS and 82 here; a 64-channel 3x3 convolution's backward-data, 4096x576x64 nt,
// 47-60 and 70-82).
inline constexpr std::int64_t kShallowDepth = kSmallGemmDepth;

// Each level's table, defined in small_gemm_kernels.cpp compiled for that level.
namespace portable {
const SmallGemmKernels& small_gemm_kernels();
}
namespace avx2 {
const SmallGemmKernels& small_gemm_kernels();
}
namespace avx512 {
const SmallGemmKernels& small_gemm_kernels();
}

}  // namespace dtnn::detail
