// conv2d_transpose's device-independent half, from which its CPU plugin (conv2d_transpose.cpp)
// and its CUDA twin (cuda_conv2d_transpose.cpp) derive: the parameters, G (the convolution the
// layer transposes) for the input image, the output's shape, flops and weights, so that each adds
// only its passes.
#pragma once
#include <string>
#include <vector>

#include "conv2d_transpose_parameters.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "weights_and_biases.hpp"

namespace dtnn::layer_parameters {

class Conv2dTransposeBase : public Layer {
 public:
  explicit Conv2dTransposeBase(const Params& p) : s_(p) {}

  std::string type() const override { return "conv2d_transpose"; }
  Shape output_shape() const override { return g_.x_shape(1).without_batch(); }
  std::string weights_shape() const override { return w_.shape().str(); }
  double forward_flops(std::int64_t batch) const override {  // G's, the same products
    return 2.0 * static_cast<double>(batch) * static_cast<double>(g_.ho() * g_.wo()) *
           static_cast<double>(g_.k * g_.c * g_.kh * g_.kw);
  }
  std::vector<Parameter> parameters() override {
    return weights_and_biases(w_, dw_, b_, db_, s_.use_bias);
  }

 protected:
  // G for the input image in `layout` (the model's on the CPU, NCHW on cuDNN), and on `device` the
  // filter (G's) and biases initialised on the host from ctx.seed (so both devices start alike),
  // their gradients at 0.
  void build_weights(const LayerBuildContext& ctx, Layout layout, Device device) {
    g_ = s_.geometry(ctx.input_shape, layout, ctx.dtype, ctx.max_batch);
    const std::int64_t window = g_.kh * g_.kw, fan_in = g_.k * window, fan_out = g_.c * window;
    w_ = initialized(g_.w_shape(), ctx.dtype, s_.init.weights, fan_in, fan_out, ctx.seed, device);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype, Layout::nchw, device);
    if (!s_.use_bias) return;
    b_ = initialized(Shape{s_.filters}, ctx.dtype, s_.init.biases, fan_in, fan_out, ctx.seed + 1,
                     device);
    db_ = Tensor::zeros(b_.shape(), ctx.dtype, Layout::nchw, device);
  }

  Conv2dTranspose s_;
  ConvGeometry g_;  // the convolution this layer transposes
  Tensor w_, dw_, b_, db_;
};

}  // namespace dtnn::layer_parameters
