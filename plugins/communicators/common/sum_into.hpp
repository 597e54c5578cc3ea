// Rank 0's arithmetic in the star-shaped transports: one rank's contribution added into the sum,
// element by element, so that summing the ranks in rank order gives every run the same bits.
#pragma once
#include <cstddef>

#include "dtnn/tensor.hpp"

namespace dtnn_net {

template <class T>
void add_elements(void* sum, const void* values, std::size_t count) {
  auto* s = static_cast<T*>(sum);
  const auto* x = static_cast<const T*>(values);
  for (std::size_t i = 0; i < count; ++i) s[i] += x[i];
}

// sum[i] += values[i] for count elements of dtype (float32 or float64).
inline void sum_into(void* sum, const void* values, std::size_t count, dtnn::DType dtype) {
  if (dtype == dtnn::DType::float32)
    add_elements<float>(sum, values, count);
  else
    add_elements<double>(sum, values, count);
}

}  // namespace dtnn_net
