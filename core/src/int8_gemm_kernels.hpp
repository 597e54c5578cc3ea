// The kernels of int8_gemm (dtnn/int8_gemm.hpp), one table per instruction-set level
// (int8_gemm_kernels.cpp, compiled once per level).
#pragma once
#include "dtnn/int8_gemm.hpp"

namespace dtnn::detail {
namespace portable {
const Int8GemmKernels& int8_gemm_kernels();
}
namespace avx2 {
const Int8GemmKernels& int8_gemm_kernels();
}
namespace avx512 {
const Int8GemmKernels& int8_gemm_kernels();
}
}  // namespace dtnn::detail
