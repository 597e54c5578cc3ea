// A cuDNN activation as a layer (cuda_relu, cuda_relu6, cuda_sigmoid, cuda_tanh): y = f(x)
// elementwise, dx = f'(x) dy from x and y.
#pragma once
#include <string>

#include "check.hpp"
#include "cuda_plugin.hpp"
#include "descriptors.hpp"

namespace dtnn::cuda {

class ActivationLayer final : public Layer {
 public:
  ActivationLayer(std::string type, cudnnActivationMode_t mode, double coef = 0.0)
      : type_(std::move(type)), desc_(mode, coef) {}
  std::string type() const override { return type_; }
  Shape output_shape() const override { return shape_; }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    dtype_ = ctx.dtype;
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    Context& cx = Context::get();
    set(x.numel());
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnActivationForward(cx.cudnn(), desc_, s.one(), flat_, x.raw(), s.zero(), flat_,
                                      y.raw()));
  }
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    Context& cx = Context::get();
    set(x.numel());
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnActivationBackward(cx.cudnn(), desc_, s.one(), flat_, y.raw(), flat_, dy.raw(),
                                       flat_, x.raw(), s.zero(), flat_, dx->raw()));
  }

 private:
  void set(std::int64_t n) {  // the batch as one [1, n, 1, 1] tensor
    if (n == elements_) return;
    elements_ = n;
    flat_.set(1, n, 1, 1, dtype_);
  }
  std::string type_;
  ActivationDesc desc_;
  TensorDesc flat_;
  Shape shape_;
  DType dtype_ = DType::float32;
  std::int64_t elements_ = -1;
};

}  // namespace dtnn::cuda
