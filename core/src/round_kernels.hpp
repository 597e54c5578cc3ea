// Each level's table of the bulk rounding (precision.hpp's RoundKernels), defined in
// round_kernels.cpp compiled for that level.
#pragma once
#include <cstdint>

#include "dtnn/precision.hpp"

namespace dtnn::detail {

namespace portable {
const RoundKernels& round_kernels();
}
namespace avx2 {
const RoundKernels& round_kernels();
}
namespace avx512 {
const RoundKernels& round_kernels();
}

}  // namespace dtnn::detail
