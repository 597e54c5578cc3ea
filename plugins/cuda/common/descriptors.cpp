#include "descriptors.hpp"

#include "check.hpp"
#include "context.hpp"

namespace dtnn::cuda {

namespace {
int i32(std::int64_t v) { return static_cast<int>(v); }
}  // namespace

TensorDesc::TensorDesc() { DTNN_CUDNN(cudnnCreateTensorDescriptor(&d_)); }

TensorDesc::TensorDesc(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, DType dtype)
    : TensorDesc() {
  set(n, c, h, w, dtype);
}

void TensorDesc::set(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w, DType dtype) {
  DTNN_CUDNN(cudnnSetTensor4dDescriptor(d_, CUDNN_TENSOR_NCHW, cudnn_type(dtype), i32(n), i32(c),
                                        i32(h), i32(w)));
}

TensorDesc::~TensorDesc() { cudnnDestroyTensorDescriptor(d_); }

FilterDesc::FilterDesc(std::int64_t k, std::int64_t c, std::int64_t kh, std::int64_t kw,
                       DType dtype) {
  DTNN_CUDNN(cudnnCreateFilterDescriptor(&d_));
  DTNN_CUDNN(cudnnSetFilter4dDescriptor(d_, cudnn_type(dtype), CUDNN_TENSOR_NCHW, i32(k), i32(c),
                                        i32(kh), i32(kw)));
}

FilterDesc::~FilterDesc() { cudnnDestroyFilterDescriptor(d_); }

ConvDesc::ConvDesc(std::int64_t pad_h, std::int64_t pad_w, std::int64_t stride_h,
                   std::int64_t stride_w, std::int64_t dilation_h, std::int64_t dilation_w,
                   DType dtype, bool tf32, std::int64_t groups) {
  DTNN_CUDNN(cudnnCreateConvolutionDescriptor(&d_));
  DTNN_CUDNN(cudnnSetConvolution2dDescriptor(d_, i32(pad_h), i32(pad_w), i32(stride_h),
                                             i32(stride_w), i32(dilation_h), i32(dilation_w),
                                             CUDNN_CROSS_CORRELATION, cudnn_type(dtype)));
  DTNN_CUDNN(cudnnSetConvolutionGroupCount(d_, i32(groups)));
  // cuDNN's default math lets float32 convolutions use TF32 tensor cores; FMA math forbids it.
  DTNN_CUDNN(cudnnSetConvolutionMathType(d_, tf32 && dtype == DType::float32
                                                 ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
                                                 : CUDNN_FMA_MATH));
}

ConvDesc::~ConvDesc() { cudnnDestroyConvolutionDescriptor(d_); }

void ConvDesc::set_math(cudnnMathType_t math) const {
  DTNN_CUDNN(cudnnSetConvolutionMathType(d_, math));
}

ActivationDesc::ActivationDesc(cudnnActivationMode_t mode, double coef) {
  DTNN_CUDNN(cudnnCreateActivationDescriptor(&d_));
  DTNN_CUDNN(cudnnSetActivationDescriptor(d_, mode, CUDNN_NOT_PROPAGATE_NAN, coef));
}

ActivationDesc::~ActivationDesc() { cudnnDestroyActivationDescriptor(d_); }

PoolingDesc::PoolingDesc(cudnnPoolingMode_t mode, std::int64_t ph, std::int64_t pw,
                         std::int64_t pad_h, std::int64_t pad_w, std::int64_t sh, std::int64_t sw) {
  DTNN_CUDNN(cudnnCreatePoolingDescriptor(&d_));
  DTNN_CUDNN(cudnnSetPooling2dDescriptor(d_, mode, CUDNN_NOT_PROPAGATE_NAN, i32(ph), i32(pw),
                                         i32(pad_h), i32(pad_w), i32(sh), i32(sw)));
}

PoolingDesc::~PoolingDesc() { cudnnDestroyPoolingDescriptor(d_); }

}  // namespace dtnn::cuda
