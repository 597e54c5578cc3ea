// A relu fused into the layer before it (conv2d, batchnorm): applied to that layer's output in
// place, and its gradient taken from the fused output y (y > 0 exactly where the relu passed).
#pragma once
#include <algorithm>

#include "dtnn/parallel.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

// y = max(y, 0).
template <class T>
void relu_in_place(Tensor& y) {
  T* p = y.data<T>();
  parallel_for(y.numel(), kParallelGrain, [&](std::int64_t i) { p[i] = std::max(p[i], T(0)); });
}

// masked = dy where y > 0, else 0: dy through the relu whose output was y.
template <class T>
void relu_gradient(const Tensor& y, const Tensor& dy, Tensor& masked) {
  const T* yp = y.data<T>();
  const T* dyp = dy.data<T>();
  T* mp = masked.data<T>();
  parallel_for(dy.numel(), kParallelGrain,
               [&](std::int64_t i) { mp[i] = yp[i] > T(0) ? dyp[i] : T(0); });
}

}  // namespace dtnn
