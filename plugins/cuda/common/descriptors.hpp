// Owning wrappers of the cuDNN descriptors the layers use, each set in its constructor.
#pragma once
#include <cudnn.h>

#include <cstdint>

#include "dtnn/tensor.hpp"

namespace dtnn::cuda {

// A 4-D NCHW tensor [n, c, h, w] of dtype, packed.
class TensorDesc {
 public:
  TensorDesc();
  TensorDesc(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, DType dtype);
  ~TensorDesc();
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
  void set(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, DType dtype);
  operator cudnnTensorDescriptor_t() const { return d_; }

 private:
  cudnnTensorDescriptor_t d_ = nullptr;
};

// A filter [k, c, kh, kw] (NCHW order: dtnn's NCHW conv2d weights).
class FilterDesc {
 public:
  FilterDesc(std::int64_t k, std::int64_t c, std::int64_t kh, std::int64_t kw, DType dtype);
  ~FilterDesc();
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
  operator cudnnFilterDescriptor_t() const { return d_; }

 private:
  cudnnFilterDescriptor_t d_ = nullptr;
};

class ConvDesc {
 public:
  ConvDesc(std::int64_t pad_h, std::int64_t pad_w, std::int64_t stride_h, std::int64_t stride_w,
           std::int64_t dilation_h, std::int64_t dilation_w, DType dtype, bool tf32,
           std::int64_t groups = 1);
  ~ConvDesc();
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
  operator cudnnConvolutionDescriptor_t() const { return d_; }
  // The math the next call runs with: cuDNN's search times each algorithm under several math
  // types, and a pass must run with the one its chosen result was timed with.
  void set_math(cudnnMathType_t math) const;

 private:
  cudnnConvolutionDescriptor_t d_ = nullptr;
};

class ActivationDesc {
 public:
  // coef: the ceiling of CUDNN_ACTIVATION_CLIPPED_RELU (relu6's 6); unused by the others.
  explicit ActivationDesc(cudnnActivationMode_t mode, double coef = 0.0);
  ~ActivationDesc();
  ActivationDesc(const ActivationDesc&) = delete;
  ActivationDesc& operator=(const ActivationDesc&) = delete;
  operator cudnnActivationDescriptor_t() const { return d_; }

 private:
  cudnnActivationDescriptor_t d_ = nullptr;
};

class PoolingDesc {
 public:
  PoolingDesc(cudnnPoolingMode_t mode, std::int64_t ph, std::int64_t pw, std::int64_t pad_h,
              std::int64_t pad_w, std::int64_t sh, std::int64_t sw);
  ~PoolingDesc();
  PoolingDesc(const PoolingDesc&) = delete;
  PoolingDesc& operator=(const PoolingDesc&) = delete;
  operator cudnnPoolingDescriptor_t() const { return d_; }

 private:
  cudnnPoolingDescriptor_t d_ = nullptr;
};

// The scaling factors cuDNN takes by pointer: double for float64 data, float otherwise.
struct Scalars {
  explicit Scalars(DType dtype) : is_double(dtype == DType::float64) {}
  const void* one() const { return is_double ? static_cast<const void*>(&d1) : &f1; }
  const void* zero() const { return is_double ? static_cast<const void*>(&d0) : &f0; }
  bool is_double;
  float f1 = 1, f0 = 0;
  double d1 = 1, d0 = 0;
};

}  // namespace dtnn::cuda
