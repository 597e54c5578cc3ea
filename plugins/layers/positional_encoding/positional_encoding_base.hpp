// positional_encoding's device-independent half, from which its CPU plugin
// (positional_encoding.cpp) and its CUDA twin (cuda_positional_encoding.cu) derive: the
// parameters, the shape and the table p [T, D] (computed or initialised on the host, then on the
// layer's device), so that each adds only forward and backward.
#pragma once
#include <string>
#include <vector>

#include "dtnn/layer.hpp"
#include "positional_encoding_parameters.hpp"

namespace dtnn::layer_parameters {

class PositionalEncodingBase : public Layer {
 public:
  explicit PositionalEncodingBase(const Params& p) : s_(p) {}

  std::string type() const override { return "positional_encoding"; }
  Shape output_shape() const override { return shape_; }
  std::string attributes() const override { return s_.learned ? "learned" : "sinusoidal"; }
  std::string weights_shape() const override { return s_.learned ? p_.shape().str() : ""; }
  std::vector<Parameter> parameters() override {
    if (!s_.learned) return {};
    return {{"weights", p_, dp_}};
  }

 protected:
  // The shape, and on `device` the table (and, learned, its gradient at 0).
  void build_table(const LayerBuildContext& ctx, Device device) {
    shape_ = ctx.input_shape;
    p_ = s_.table(shape_, ctx.dtype, ctx.seed).to(device);
    if (s_.learned) dp_ = Tensor::zeros(shape_, ctx.dtype, Layout::nchw, device);
  }

  PositionalEncoding s_;
  Shape shape_;
  Tensor p_, dp_;
};

}  // namespace dtnn::layer_parameters
