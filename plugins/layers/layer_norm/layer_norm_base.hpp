// layer_norm's device-independent half, from which its CPU plugin (layer_norm.cpp) and its CUDA
// twin (cuda_layer_norm.cu) derive: epsilon, the rows and their width, the flops, gamma (1) and
// beta (0) with their gradients, so that each adds only its statistics, forward and backward.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "dtnn/layer.hpp"
#include "layer_norm_parameters.hpp"

namespace dtnn::layer_parameters {

class LayerNormBase : public Layer {
 public:
  explicit LayerNormBase(const Params& p) : epsilon_(p.get_double("epsilon")) {
    if (!(epsilon_ > 0)) p.fail("epsilon", "a positive number");
  }
  std::string type() const override { return "layer_norm"; }
  Shape output_shape() const override { return shape_; }
  std::string weights_shape() const override { return gamma_.shape().str(); }
  double forward_flops(std::int64_t batch) const override {
    return 8.0 * double(batch) * double(shape_.numel());
  }
  std::vector<Parameter> parameters() override {
    return {{"gamma", gamma_, dgamma_}, {"beta", beta_, dbeta_}};
  }

 protected:
  // The rows (the last axis normalised), and on `device` gamma = 1, beta = 0, gradients 0.
  void build_weights(const LayerBuildContext& ctx, Device device) {
    shape_ = ctx.input_shape;
    width_ = shape_[shape_.rank() - 1];
    rows_ = shape_.numel() / width_;
    Tensor ones = Tensor::empty(Shape{width_}, ctx.dtype, Layout::nchw);
    dispatch_dtype(ctx.dtype, [&](auto z) {
      using T = decltype(z);
      std::fill_n(ones.data<T>(), width_, T(1));
    });
    gamma_ = ones.to(device);
    auto zeros = [&] { return Tensor::zeros(Shape{width_}, ctx.dtype, Layout::nchw, device); };
    beta_ = zeros();
    dgamma_ = zeros();
    dbeta_ = zeros();
  }

  double epsilon_;
  Shape shape_;
  std::int64_t width_ = 0, rows_ = 0;  // features per position; positions per sample
  Tensor gamma_, beta_, dgamma_, dbeta_;
};

}  // namespace dtnn::layer_parameters
