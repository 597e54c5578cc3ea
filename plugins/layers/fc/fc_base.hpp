// fc's device-independent half, from which its CPU plugin (fc.cpp) and its CUDA twin
// (cuda_fc.cpp) derive: the parameters, shapes, flops, weights and PyDTNN arrays, so that each
// adds only forward and backward on its device.
#pragma once
#include <string>
#include <vector>

#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "fc_parameters.hpp"
#include "weights_and_biases.hpp"

namespace dtnn::layer_parameters {

class FcBase : public Layer {
 public:
  explicit FcBase(const Params& p) : s_(p) {}

  std::string type() const override { return "fc"; }
  Shape output_shape() const override { return s_.output_shape(input_); }
  std::string weights_shape() const override { return w_.shape().str(); }
  double forward_flops(std::int64_t batch) const override {
    return 2.0 * static_cast<double>(batch * input_.numel() / in_) *
           static_cast<double>(w_.numel());
  }
  bool backward_reads_output() const override { return false; }

  void pydtnn_arrays(PydtnnArrays& out, const Shape&) override {
    pydtnn_names::fc(out, parameters());
  }
  std::vector<Parameter> parameters() override {
    return weights_and_biases(w_, dw_, b_, db_, s_.use_bias);
  }

 protected:
  // The input's shape, and on `device` the weights w [in, units] and biases [units] (initialised
  // on the host from ctx.seed, so both devices start alike) with their gradients at 0.
  void build_weights(const LayerBuildContext& ctx, Device device) {
    input_ = ctx.input_shape;
    in_ = s_.features(input_);
    w_ = initialized(Shape{in_, s_.units}, ctx.dtype, s_.init.weights, in_, s_.units, ctx.seed,
                     device);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype, Layout::nchw, device);
    if (s_.use_bias) {
      b_ = initialized(Shape{s_.units}, ctx.dtype, s_.init.biases, in_, s_.units, ctx.seed + 1,
                       device);
      db_ = Tensor::zeros(b_.shape(), ctx.dtype, Layout::nchw, device);
    }
  }
  // The rows of x (in_ values each).
  std::int64_t rows(const Tensor& x) const { return x.numel() / in_; }

  Fc s_;
  Shape input_;
  std::int64_t in_ = 0;
  Tensor w_, dw_, b_, db_;
};

}  // namespace dtnn::layer_parameters
