// The winograd plugin's Winograd-domain kernels (domain.hpp) as one table (kernels.hpp), in a
// translation unit of their own: the templates of domain.hpp compile beside winograd.cpp.
#include "domain.hpp"

namespace dtnn::winograd {

namespace {
template <class T, int M>
constexpr Kernels<T, M> kernels() {
  return {&inputs_to_domain<T, M>, &outputs_from_domain<T, M>, &gradients_to_domain<T, M>,
          &filter_transform<T, M>, &add_filter_gradient<T, M>};
}
}  // namespace

const KernelSet& kernel_set() {
  static constexpr KernelSet set{kernels<float, 2>(), kernels<float, 4>(), kernels<double, 2>(),
                                 kernels<double, 4>()};
  return set;
}

}  // namespace dtnn::winograd
