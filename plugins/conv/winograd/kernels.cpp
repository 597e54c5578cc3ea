// One variant of the winograd kernels (kernels.hpp): this file is compiled once per instruction set
// (cmake/DtnnIsa.cmake), each time with DTNN_ISA naming it (avx512, avx2, portable) and the
// compiler targeting it, and defines kernel_set_<DTNN_ISA>().
#include "domain.hpp"

#define DTNN_WINOGRAD_CAT2(a, b) a##b
#define DTNN_WINOGRAD_CAT(a, b) DTNN_WINOGRAD_CAT2(a, b)
#define DTNN_WINOGRAD_STR2(a) #a
#define DTNN_WINOGRAD_STR(a) DTNN_WINOGRAD_STR2(a)

namespace dtnn::winograd {

namespace DTNN_ISA {
namespace {
template <class T, int M>
Kernels<T, M> kernels() {
  return {&inputs_to_domain<T, M>, &outputs_from_domain<T, M>, &gradients_to_domain<T, M>,
          &filter_transform<T, M>, &add_filter_gradient<T, M>};
}
}  // namespace
}  // namespace DTNN_ISA

const KernelSet& DTNN_WINOGRAD_CAT(kernel_set_, DTNN_ISA)() {
  static const KernelSet set{DTNN_WINOGRAD_STR(DTNN_ISA), DTNN_ISA::kernels<float, 2>(),
                             DTNN_ISA::kernels<float, 4>(), DTNN_ISA::kernels<double, 2>(),
                             DTNN_ISA::kernels<double, 4>()};
  return set;
}

}  // namespace dtnn::winograd
