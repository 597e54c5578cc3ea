// Each level's table of the finite check (nonfinite.hpp's FiniteKernels), defined in
// finite_kernels.cpp compiled for that level.
#pragma once

#include "dtnn/nonfinite.hpp"

namespace dtnn::detail {

namespace portable {
const FiniteKernels& finite_kernels();
}
namespace avx2 {
const FiniteKernels& finite_kernels();
}
namespace avx512 {
const FiniteKernels& finite_kernels();
}

}  // namespace dtnn::detail
