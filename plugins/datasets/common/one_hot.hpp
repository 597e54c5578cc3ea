// Row `row` of a batch's labels y ([n, classes]) as the one-hot vector of class `label`.
#pragma once
#include <algorithm>
#include <cstdint>

#include "dtnn/tensor.hpp"

namespace dtnn::datasets {

template <class T>
inline void write_one_hot(Tensor& y, std::int64_t row, std::int64_t label) {
  const std::int64_t classes = y.dim(1);
  T* out = y.data<T>() + row * classes;
  std::fill(out, out + classes, T(0));
  out[label] = T(1);
}

}  // namespace dtnn::datasets
