// Tensor: a typed, shaped view of 64-byte aligned storage.
//
// Shapes are in memory order: an NHWC activation batch is {N, H, W, C}, an NCHW one {N, C, H, W};
// the layout tag says which. Views (slice_batch, reshape) share storage and never allocate, so
// the training step can take per-batch views of buffers allocated once at model build.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include "dtnn/core_export.hpp"
#include "dtnn/error.hpp"

namespace dtnn {

// Append-only enums: their values are written into checkpoints and plugin descriptors.
enum class DType : std::uint8_t { float32 = 0, float64 = 1 };
enum class Layout : std::uint8_t { nhwc = 0, nchw = 1 };
enum class Device : std::uint8_t { cpu = 0, cuda = 1 };

DTNN_CORE_EXPORT std::size_t dtype_size(DType t);
DTNN_CORE_EXPORT const char* to_string(DType t);
DTNN_CORE_EXPORT const char* to_string(Layout l);
DTNN_CORE_EXPORT const char* to_string(Device d);
DTNN_CORE_EXPORT DType parse_dtype(std::string_view s);    // "float32" | "float64"
DTNN_CORE_EXPORT Layout parse_layout(std::string_view s);  // "NHWC" | "NCHW" (any case)

template <class T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::float32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::float64;
}

// Calls f(T{}) with T = float or double according to t: the one place dtype becomes a type.
template <class F>
decltype(auto) dispatch_dtype(DType t, F&& f) {
  if (t == DType::float64) return f(double{});
  return f(float{});
}

// Fixed-capacity shape: copying it never allocates.
class DTNN_CORE_EXPORT Shape {
 public:
  static constexpr int kMaxRank = 6;
  Shape() = default;
  Shape(std::initializer_list<std::int64_t> dims);
  template <class It>
  static Shape from(It begin, It end) {
    Shape s;
    for (; begin != end; ++begin) s.push_back(static_cast<std::int64_t>(*begin));
    return s;
  }
  int rank() const { return rank_; }
  std::int64_t operator[](int i) const { return dims_[static_cast<std::size_t>(i)]; }
  std::int64_t& operator[](int i) { return dims_[static_cast<std::size_t>(i)]; }
  std::int64_t numel() const;
  void push_back(std::int64_t d);
  Shape with_batch(std::int64_t n) const;  // {n, dims...}
  Shape without_batch() const;             // drops dim 0
  const std::int64_t* begin() const { return dims_.data(); }
  const std::int64_t* end() const { return dims_.data() + rank_; }
  std::string str() const;  // "(26, 26, 4)"
  bool operator==(const Shape& o) const;

 private:
  std::array<std::int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

class DTNN_CORE_EXPORT Tensor {
 public:
  Tensor() = default;
  // Memory of a non-cpu device comes from its installed DeviceRuntime (device.hpp).
  static Tensor empty(const Shape& shape, DType dtype, Layout layout = Layout::nhwc,
                      Device device = Device::cpu);
  static Tensor zeros(const Shape& shape, DType dtype, Layout layout = Layout::nhwc,
                      Device device = Device::cpu);

  bool defined() const { return data_ != nullptr || shape_.rank() > 0; }
  const Shape& shape() const { return shape_; }
  std::int64_t dim(int i) const { return shape_[i]; }
  DType dtype() const { return dtype_; }
  Layout layout() const { return layout_; }
  Device device() const { return device_; }
  std::int64_t numel() const { return shape_.numel(); }
  std::size_t bytes() const { return static_cast<std::size_t>(numel()) * dtype_size(dtype_); }

  // The elements' address; on a device, a device address that host code must not dereference.
  template <class T>
  T* data() const {
    DTNN_CHECK(dtype_ == dtype_of<T>(), "tensor holds another dtype");
    return reinterpret_cast<T*>(data_);
  }
  void* raw() const { return data_; }

  Tensor slice_batch(std::int64_t begin, std::int64_t end) const;  // rows [begin, end) of dim 0
  Tensor reshape(const Shape& shape) const;                        // same numel, shared storage
  Tensor view(const Shape& shape) const;    // the first shape.numel() elements, shared storage
  Tensor with_layout(Layout layout) const;  // same memory, new tag
  void fill_zero();
  // Same numel and dtype; either tensor may be on a device (the copy goes through its runtime).
  void copy_from(const Tensor& other);
  Tensor to(Device device) const;  // a copy on `device` (this tensor itself when already there)
  // Where host code writes this tensor's new values before copy_from(them): the tensor itself on
  // the cpu (the copy is then nothing), else a host tensor of its shape.
  Tensor host_staging() const;

 private:
  std::shared_ptr<std::byte> storage_;
  std::byte* data_ = nullptr;
  Shape shape_;
  DType dtype_ = DType::float32;
  Layout layout_ = Layout::nhwc;
  Device device_ = Device::cpu;
};

}  // namespace dtnn
