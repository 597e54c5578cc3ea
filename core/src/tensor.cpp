#include "dtnn/tensor.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <new>

#include "dtnn/checked.hpp"
#include "dtnn/device.hpp"
#include "dtnn/error.hpp"
#include "dtnn/memory.hpp"

namespace dtnn {

std::size_t dtype_size(DType t) { return t == DType::float64 ? 8 : 4; }
const char* to_string(DType t) { return t == DType::float64 ? "float64" : "float32"; }
const char* to_string(Layout l) { return l == Layout::nchw ? "NCHW" : "NHWC"; }
const char* to_string(Device d) { return d == Device::cuda ? "cuda" : "cpu"; }

DType parse_dtype(std::string_view s) {
  if (s == "float32") return DType::float32;
  if (s == "float64") return DType::float64;
  throw Error("unknown dtype '" + std::string(s) + "' (expected float32 or float64)");
}

Layout parse_layout(std::string_view s) {
  std::string u(s);
  std::transform(u.begin(), u.end(), u.begin(), [](unsigned char c) { return std::toupper(c); });
  if (u == "NHWC") return Layout::nhwc;
  if (u == "NCHW") return Layout::nchw;
  throw Error("unknown tensor format '" + std::string(s) + "' (expected NHWC or NCHW)");
}

Shape::Shape(std::initializer_list<std::int64_t> dims) {
  for (auto d : dims) push_back(d);
}

std::int64_t Shape::numel() const {
  const auto n = checked_product(std::span(dims_.data(), static_cast<std::size_t>(rank_)));
  if (!n) {
    for (auto d : *this)
      if (d < 0) throw Error("shape " + str() + " has a negative dimension");
    throw Error("shape " + str() + " has more than 2^63 elements");
  }
  return *n;
}

void Shape::push_back(std::int64_t d) {
  DTNN_CHECK(rank_ < kMaxRank, "shape rank above " + std::to_string(kMaxRank));
  dims_[static_cast<std::size_t>(rank_++)] = d;
}

Shape Shape::with_batch(std::int64_t n) const {
  Shape s;
  s.push_back(n);
  for (auto d : *this) s.push_back(d);
  return s;
}

Shape Shape::without_batch() const {
  Shape s;
  for (int i = 1; i < rank_; ++i) s.push_back((*this)[i]);
  return s;
}

std::string Shape::str() const {
  std::string s = "(";
  for (int i = 0; i < rank_; ++i) {
    if (i) s += ", ";
    s += std::to_string((*this)[i]);
  }
  if (rank_ == 1) s += ",";
  return s + ")";
}

bool Shape::operator==(const Shape& o) const {
  return rank_ == o.rank_ && std::equal(begin(), end(), o.begin());
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Layout layout, Device device) {
  Tensor t;
  t.shape_ = shape;
  t.dtype_ = dtype;
  t.layout_ = layout;
  t.device_ = device;
  const auto bytes_or = checked_mul(t.numel(), static_cast<std::int64_t>(dtype_size(dtype)));
  if (!bytes_or) throw Error("a tensor of shape " + shape.str() + " needs more than 2^63 bytes");
  const std::size_t bytes = static_cast<std::size_t>(*bytes_or);
  check_fits_in_memory(bytes,
                       "a " + std::string(to_string(dtype)) + " tensor of shape " + shape.str());
  if (device != Device::cpu) {
    t.storage_ = device_runtime(device).allocate(bytes);
    t.data_ = t.storage_.get();
    return t;
  }
  std::byte* p = nullptr;
  try {
    p = allocate_aligned(bytes);
  } catch (const std::bad_alloc&) {
    throw Error("out of memory allocating a tensor of " + std::to_string(bytes) + " bytes");
  }
  t.storage_ = std::shared_ptr<std::byte>(p, [](std::byte* q) { std::free(q); });
  t.data_ = t.storage_.get();
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Layout layout, Device device) {
  Tensor t = empty(shape, dtype, layout, device);
  t.fill_zero();
  return t;
}

Tensor Tensor::slice_batch(std::int64_t begin, std::int64_t end) const {
  DTNN_CHECK(shape_.rank() >= 1 && begin >= 0 && begin <= end && end <= shape_[0],
             "batch slice [" + std::to_string(begin) + ", " + std::to_string(end) + ") of " +
                 shape_.str());
  Tensor t = *this;
  std::int64_t row = shape_[0] ? numel() / shape_[0] : 0;
  t.data_ = data_ + static_cast<std::size_t>(begin * row) * dtype_size(dtype_);
  t.shape_[0] = end - begin;
  return t;
}

Tensor Tensor::reshape(const Shape& shape) const {
  DTNN_CHECK(shape.numel() == numel(), "reshape " + shape_.str() + " to " + shape.str());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::view(const Shape& shape) const {
  DTNN_CHECK(shape.numel() <= numel(), "view " + shape.str() + " of " + shape_.str());
  Tensor t = *this;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::with_layout(Layout layout) const {
  Tensor t = *this;
  t.layout_ = layout;
  return t;
}

void Tensor::fill_zero() {
  if (!data_) return;
  if (device_ != Device::cpu)
    device_runtime(device_).fill_zero(data_, bytes());
  else
    std::memset(data_, 0, bytes());
}

void Tensor::copy_from(const Tensor& other) {
  DTNN_CHECK(other.numel() == numel() && other.dtype() == dtype_,
             "copy " + other.shape_.str() + " into " + shape_.str());
  if (other.data_ == data_) return;
  if (device_ != Device::cpu || other.device_ != Device::cpu)
    device_runtime(device_ != Device::cpu ? device_ : other.device_)
        .copy(data_, other.data_, bytes());
  else
    std::memcpy(data_, other.data_, bytes());
}

Tensor Tensor::host_staging() const {
  return device_ == Device::cpu ? *this : empty(shape_, dtype_, layout_);
}

Tensor Tensor::to(Device device) const {
  if (device == device_) return *this;
  Tensor t = empty(shape_, dtype_, layout_, device);
  t.copy_from(*this);
  return t;
}

}  // namespace dtnn
