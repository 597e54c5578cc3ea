// upsample2d's device-independent half, from which its CPU plugin (upsample2d.cpp) and its CUDA
// twin (cuda_upsample2d.cu) derive: the factors, the input image's size in the model's layout and
// the output's shape, so that each adds only forward and backward.
#pragma once
#include <string>

#include "dtnn/image_shape.hpp"
#include "dtnn/layer.hpp"
#include "upsample2d_parameters.hpp"

namespace dtnn::layer_parameters {

class Upsample2dBase : public Layer {
 public:
  explicit Upsample2dBase(const Params& p) : s_(p) {}
  std::string type() const override { return "upsample2d"; }
  std::string attributes() const override { return s_.attributes(); }
  Shape output_shape() const override {
    return image_shape(h_ * s_.rows, w_ * s_.columns, c_, nhwc_ ? Layout::nhwc : Layout::nchw);
  }

 protected:
  // The input image (H, W, C in the model's layout), checked.
  void build_shape(const LayerBuildContext& ctx) {
    const ImageShape in = image_of(ctx.input_shape, ctx.layout, "upsample2d");
    nhwc_ = ctx.layout == Layout::nhwc;
    h_ = in.h;
    w_ = in.w;
    c_ = in.c;
  }

  Upsample2d s_;
  bool nhwc_ = true;
  std::int64_t h_ = 0, w_ = 0, c_ = 0;
};

}  // namespace dtnn::layer_parameters
