// upsample2d's device-independent half, from which its CPU plugin (upsample2d.cpp) and its CUDA
// twin (cuda_upsample2d.cu) derive: the factors, the input image's size in the model's layout and
// the output's shape, so that each adds only forward and backward.
#pragma once
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "upsample2d_parameters.hpp"

namespace dtnn::layer_parameters {

class Upsample2dBase : public Layer {
 public:
  explicit Upsample2dBase(const Params& p) : s_(p) {}
  std::string type() const override { return "upsample2d"; }
  std::string attributes() const override { return s_.attributes(); }
  Shape output_shape() const override {
    const std::int64_t ho = h_ * s_.rows, wo = w_ * s_.columns;
    return nhwc_ ? Shape{ho, wo, c_} : Shape{c_, ho, wo};
  }

 protected:
  // The input image (H, W, C in the model's layout), checked.
  void build_shape(const LayerBuildContext& ctx) {
    const Shape& in = ctx.input_shape;
    if (in.rank() != 3) throw Error("upsample2d expects image input (H, W, C), got " + in.str());
    nhwc_ = ctx.layout == Layout::nhwc;
    h_ = nhwc_ ? in[0] : in[1];
    w_ = nhwc_ ? in[1] : in[2];
    c_ = nhwc_ ? in[2] : in[0];
  }

  Upsample2d s_;
  bool nhwc_ = true;
  std::int64_t h_ = 0, w_ = 0, c_ = 0;
};

}  // namespace dtnn::layer_parameters
