// The convolution family's device-independent half, from which conv2d's and depthwise_conv2d's CPU
// plugins (conv2d.cpp, depthwise_conv2d.cpp) and their CUDA twin (cuda_conv_layer.hpp) derive: the
// parameters, the geometry for the input image, the output's shape, flops, weights and PyDTNN
// arrays, so that each adds only its passes.
//   conv2d            weights NHWC [KH, KW, C/G, K], NCHW [K, C/G, KH, KW]; biases (K)
//   depthwise_conv2d  one filter per channel: weights NHWC [KH, KW, C], NCHW [C, KH, KW]; biases
//   (C)
#pragma once
#include <string>
#include <vector>

#include "conv_parameters.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/error.hpp"
#include "dtnn/image_shape.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "weights_and_biases.hpp"

namespace dtnn::layer_parameters {

class ConvBase : public Layer {
 public:
  // depthwise: depthwise_conv2d's parameters, else conv2d's, read and checked as both devices
  // read them.
  ConvBase(const Params& p, bool depthwise) : depthwise_(depthwise), init_(p) {
    if (depthwise) {
      const DepthwiseConv2d s(p);
      g_ = s.geometry;
      use_bias_ = s.use_bias;
      return;
    }
    const Conv2d s(p);
    g_ = s.geometry;
    use_bias_ = s.use_bias;
    relu_ = s.relu;
  }

  std::string type() const override { return depthwise_ ? "depthwise_conv2d" : "conv2d"; }
  Shape output_shape() const override { return g_.y_shape(1).without_batch(); }
  std::string weights_shape() const override { return w_.shape().str(); }
  // Each output value sums a window over the channels of its group (depthwise: one channel).
  double forward_flops(std::int64_t batch) const override {
    return 2.0 * static_cast<double>(batch) * static_cast<double>(g_.ho() * g_.wo() * g_.k) *
           static_cast<double>(g_.kh * g_.kw * (g_.c / groups()));
  }

  std::vector<Parameter> parameters() override {
    return weights_and_biases(w_, dw_, b_, db_, use_bias_);
  }
  void pydtnn_arrays(PydtnnArrays& out, const Shape&) override {
    if (depthwise_)
      pydtnn_names::depthwise_conv2d(out, parameters());
    else
      pydtnn_names::conv2d(out, parameters());
    if (relu_) out.layer("Relu");
  }

 protected:
  // The geometry for the input image in `layout` (the model's on the CPU, NCHW on cuDNN), batches
  // up to ctx.max_batch; an Error when the kernel or the groups do not fit it.
  void build_geometry(const LayerBuildContext& ctx, Layout layout) {
    const ImageShape in = image_of(ctx.input_shape, layout, type());
    g_.layout = layout;
    g_.dtype = ctx.dtype;
    g_.n = ctx.max_batch;
    g_.h = in.h;
    g_.w = in.w;
    g_.c = in.c;
    if (depthwise_) g_.k = in.c;
    if (g_.ho() < 1 || g_.wo() < 1) throw Error("kernel larger than the padded input: " + g_.str());
    if (g_.c % g_.groups != 0)
      throw Error("conv2d: " + std::to_string(g_.groups) + " groups do not divide the input's " +
                  std::to_string(g_.c) + " channels");
  }
  // On `device`, the weights and biases initialised on the host from ctx.seed (so both devices
  // start alike), their gradients at 0. Fans per group: what one output reads and one input feeds.
  void build_weights(const LayerBuildContext& ctx, Device device) {
    const std::int64_t window = g_.kh * g_.kw, fan_in = g_.c / groups() * window,
                       fan_out = g_.k / groups() * window;
    const bool nhwc = g_.layout == Layout::nhwc;
    const Shape shape = !depthwise_ ? g_.w_shape()
                        : nhwc      ? Shape{g_.kh, g_.kw, g_.c}
                                    : Shape{g_.c, g_.kh, g_.kw};
    w_ = initialized(shape, g_.dtype, init_.weights, fan_in, fan_out, ctx.seed, device);
    dw_ = Tensor::zeros(shape, g_.dtype, Layout::nchw, device);
    if (!use_bias_) return;
    b_ = initialized(Shape{g_.k}, g_.dtype, init_.biases, fan_in, fan_out, ctx.seed + 1, device);
    db_ = Tensor::zeros(b_.shape(), g_.dtype, Layout::nchw, device);
  }
  // Groups of channels: one per channel for depthwise_conv2d.
  std::int64_t groups() const { return depthwise_ ? g_.c : g_.groups; }

  bool depthwise_;
  Initializers init_;
  ConvGeometry g_;
  bool use_bias_ = true;
  bool relu_ = false;  // conv2d's fused relu ("activation": "relu")
  Tensor w_, dw_, b_, db_;
};

}  // namespace dtnn::layer_parameters
