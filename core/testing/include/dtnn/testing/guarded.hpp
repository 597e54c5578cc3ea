// GuardedTensor: a tensor with guard zones before and after it, filled with a sentinel, to
// catch a kernel that writes outside its output.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/tensor.hpp"

namespace dtnn::testing {

class GuardedTensor {
 public:
  static constexpr std::int64_t kGuard = 64;  // elements each side
  GuardedTensor(const Shape& shape, DType dtype, Layout layout);
  Tensor& tensor() { return view_; }
  // "" when both guard zones still hold the sentinel, else where they were overwritten.
  std::string check_guards() const;

 private:
  Tensor storage_, view_;
};

// Fills t with uniform values in [lo, hi) from seed.
void fill_uniform(Tensor& t, std::uint64_t seed, double lo = -1.0, double hi = 1.0);
// max |a - b| / max(1, max |b|), over all elements (a and b have the same numel and dtype).
double relative_error(const Tensor& a, const Tensor& b);
double value_at(const Tensor& t, std::int64_t i);
void set_value_at(Tensor& t, std::int64_t i, double v);

}  // namespace dtnn::testing
