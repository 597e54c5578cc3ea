// batchnorm's device-independent half, from which its CPU plugin (batchnorm.cpp) and its CUDA twin
// (cuda_batchnorm.cu) derive: the parameters, the shape, gamma and beta, the running statistics
// and the PyDTNN arrays, so that each adds only its passes.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "batchnorm_parameters.hpp"
#include "dtnn/layer.hpp"

namespace dtnn::layer_parameters {

class BatchnormBase : public Layer {
 public:
  explicit BatchnormBase(const Batchnorm& s) : s_(s) {}

  std::string type() const override { return "batchnorm"; }
  Shape output_shape() const override { return shape_; }
  std::string weights_shape() const override { return "(" + std::to_string(c_) + ")"; }

  std::vector<Parameter> parameters() override { return {gamma_, beta_}; }
  std::vector<Tensor> state() override { return {running_mean_, running_var_}; }
  void pydtnn_arrays(PydtnnArrays& out, const Shape&) override {
    pydtnn_names::batchnorm(out, parameters(), state());
    if (s_.relu) out.layer("Relu");
  }

 protected:
  // The input's shape, and on `device`, for `channels` channels: gamma and beta at their initial
  // values (gradients at 0), the running mean at 0 and the running variance at 1.
  void build_parameters(const LayerBuildContext& ctx, std::int64_t channels, Device device) {
    shape_ = ctx.input_shape;
    c_ = channels;
    const Shape per_channel{c_};
    auto filled = [&](double v) {
      Tensor host = Tensor::empty(per_channel, ctx.dtype, Layout::nchw);
      dispatch_dtype(ctx.dtype, [&](auto z) {
        using T = decltype(z);
        std::fill(host.data<T>(), host.data<T>() + c_, static_cast<T>(v));
      });
      return host.to(device);
    };
    auto zeros = [&] { return Tensor::zeros(per_channel, ctx.dtype, Layout::nchw, device); };
    gamma_ = {"gamma", filled(s_.gamma), zeros()};
    beta_ = {"beta", filled(s_.beta), zeros()};
    running_mean_ = zeros();
    running_var_ = filled(1.0);
  }

  Batchnorm s_;
  Shape shape_;
  std::int64_t c_ = 0;
  Parameter gamma_, beta_;
  Tensor running_mean_, running_var_;
};

}  // namespace dtnn::layer_parameters
