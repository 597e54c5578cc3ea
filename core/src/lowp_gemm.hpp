// The kernels of the low-precision GEMM (dtnn::gemm with a Precision, gemm.hpp): per
// instruction-set level, the bf16 kernel for CPUs with AVX512-BF16 (bf16_gemm_kernels.cpp; null
// below the avx512 level). Row-major, like dtnn::gemm; `threads` is the team to run on.
#pragma once
#include <cstdint>

#include "dtnn/gemm.hpp"

namespace dtnn::detail {

// The threads a product of m x n x k runs on (gemm.cpp's rule: one when it is small, when the
// caller is inside a parallel region, or when OMP_WAIT_POLICY=passive says the cores are shared).
int gemm_threads(std::int64_t m, std::int64_t n, std::int64_t k);

namespace portable {
const Bf16GemmKernels& bf16_gemm_kernels();
}
namespace avx2 {
const Bf16GemmKernels& bf16_gemm_kernels();
}
namespace avx512 {
const Bf16GemmKernels& bf16_gemm_kernels();
}

}  // namespace dtnn::detail
