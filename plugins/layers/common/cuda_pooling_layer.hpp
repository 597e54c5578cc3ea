// A cuDNN pooling as a layer (cuda_maxpool2d, cuda_avgpool2d), with the CPU layers' geometry
// (dtnn/window.hpp). Average pooling counts padded positions as zeros, as the CPU one does.
#pragma once
#include <memory>
#include <string>

#include "check.hpp"
#include "cuda_plugin.hpp"
#include "descriptors.hpp"
#include "dtnn/window.hpp"

namespace dtnn::cuda {

class PoolingLayer final : public Layer {
 public:
  PoolingLayer(const Params& p, std::string type, cudnnPoolingMode_t mode)
      : params_(p), type_(std::move(type)), mode_(mode) {}
  std::string type() const override { return type_; }
  Shape output_shape() const override { return g_.out_shape(); }
  std::string attributes() const override { return g_.str() + " cudnn"; }

  void build(const LayerBuildContext& ctx) override {
    chw_of(ctx, type_);
    g_ = Window2d::from(params_, ctx.input_shape, Layout::nchw);
    dtype_ = ctx.dtype;
    desc_ = std::make_unique<PoolingDesc>(mode_, g_.ph, g_.pw, g_.pad_h, g_.pad_w, g_.sh, g_.sw);
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnPoolingForward(cx.cudnn(), *desc_, s.one(), x_desc_, x.raw(), s.zero(), y_desc_,
                                   y.raw()));
  }
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnPoolingBackward(cx.cudnn(), *desc_, s.one(), y_desc_, y.raw(), y_desc_,
                                    dy.raw(), x_desc_, x.raw(), s.zero(), x_desc_, dx->raw()));
  }

 private:
  void set_batch(std::int64_t n) {
    if (n == batch_) return;
    batch_ = n;
    x_desc_.set(n, g_.c, g_.h, g_.w, dtype_);
    y_desc_.set(n, g_.c, g_.ho(), g_.wo(), dtype_);
  }
  Params params_;
  std::string type_;
  cudnnPoolingMode_t mode_;
  Window2d g_;
  DType dtype_ = DType::float32;
  std::unique_ptr<PoolingDesc> desc_;
  TensorDesc x_desc_, y_desc_;
  std::int64_t batch_ = -1;
};

}  // namespace dtnn::cuda
