// The small GEMM kernels' family: the levels built (cmake/DtnnIsa.cmake), chosen at first use.
#include "small_gemm.hpp"

namespace dtnn {

namespace {
const isa::Family<SmallGemmKernels> kSmallGemm(
    "core/small_gemm", {
                           {isa::Level::portable, &detail::portable::small_gemm_kernels},
#ifdef DTNN_HAVE_ISA_avx2
                           {isa::Level::avx2, &detail::avx2::small_gemm_kernels},
#endif
#ifdef DTNN_HAVE_ISA_avx512
                           {isa::Level::avx512, &detail::avx512::small_gemm_kernels},
#endif
                       });
}  // namespace

const isa::Family<SmallGemmKernels>& small_gemm_kernels() { return kSmallGemm; }

}  // namespace dtnn
