#include "dtnn/testing/guarded.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "dtnn/rng.hpp"

namespace dtnn::testing {

namespace {
constexpr std::uint8_t kSentinel = 0xA5;
}

GuardedTensor::GuardedTensor(const Shape& shape, DType dtype, Layout layout) {
  storage_ = Tensor::empty(Shape{shape.numel() + 2 * kGuard}, dtype, layout);
  std::memset(storage_.raw(), kSentinel, storage_.bytes());
  view_ = storage_.slice_batch(kGuard, kGuard + shape.numel()).reshape(shape).with_layout(layout);
}

std::string GuardedTensor::check_guards() const {
  const auto* bytes = static_cast<const std::uint8_t*>(storage_.raw());
  const std::size_t guard_bytes = kGuard * dtype_size(storage_.dtype());
  const std::size_t total = storage_.bytes();
  for (std::size_t i = 0; i < guard_bytes; ++i)
    if (bytes[i] != kSentinel)
      return "wrote before its output (byte " + std::to_string(guard_bytes - i) + " before)";
  for (std::size_t i = total - guard_bytes; i < total; ++i)
    if (bytes[i] != kSentinel)
      return "wrote past its output (byte " + std::to_string(i - (total - guard_bytes)) + " after)";
  return "";
}

double value_at(const Tensor& t, std::int64_t i) {
  return dispatch_dtype(t.dtype(), [&](auto z) { return double(t.data<decltype(z)>()[i]); });
}

void set_value_at(Tensor& t, std::int64_t i, double v) {
  dispatch_dtype(t.dtype(), [&](auto z) {
    using T = decltype(z);
    t.data<T>()[i] = static_cast<T>(v);
  });
}

void fill_uniform(Tensor& t, std::uint64_t seed, double lo, double hi) {
  Rng rng(seed);
  for (std::int64_t i = 0; i < t.numel(); ++i) set_value_at(t, i, rng.uniform(lo, hi));
}

double relative_error(const Tensor& a, const Tensor& b) {
  double diff = 0, scale = 1;
  for (std::int64_t i = 0; i < b.numel(); ++i) {
    const double va = value_at(a, i), vb = value_at(b, i);
    if (std::isnan(va) || std::isnan(vb)) return INFINITY;
    diff = std::max(diff, std::abs(va - vb));
    scale = std::max(scale, std::abs(vb));
  }
  return diff / scale;
}

}  // namespace dtnn::testing
