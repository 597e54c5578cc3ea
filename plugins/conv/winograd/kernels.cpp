// The winograd plugin's Winograd-domain kernels (domain.hpp) as one table (kernels.hpp), in a
// translation unit of their own: the templates of domain.hpp compile beside winograd.cpp.
#include "domain.hpp"

namespace dtnn::winograd {

namespace {
template <class T, int M, int R>
constexpr Kernels<T, M, R> kernels() {
  return {&inputs_to_domain<T, M, R>, &outputs_from_domain<T, M, R>, &gradients_to_domain<T, M, R>,
          &filter_transform<T, M, R>, &add_filter_gradient<T, M, R>};
}
template <class T>
constexpr Variants<T> variants() {
  return {kernels<T, 2, 3>(), kernels<T, 4, 3>(), kernels<T, 3, 2>(), kernels<T, 2, 5>()};
}
}  // namespace

const KernelSet& kernel_set() {
  static constexpr KernelSet set{variants<float>(), variants<double>()};
  return set;
}

}  // namespace dtnn::winograd
