// adaptive_avgpool2d's device-independent half, from which its CPU plugin (adaptive_avgpool2d.cpp)
// and its CUDA twin (cuda_adaptive_avgpool2d.cu) derive: the output's size, the input image's in
// the model's layout and the output's shape, so that each adds only forward and backward.
#pragma once
#include <string>

#include "adaptive_avgpool2d_parameters.hpp"
#include "dtnn/image_shape.hpp"
#include "dtnn/layer.hpp"

namespace dtnn::layer_parameters {

class AdaptiveAvgPool2dBase : public Layer {
 public:
  explicit AdaptiveAvgPool2dBase(const Params& p)
      : output_(p), ho_(output_.height), wo_(output_.width) {}
  std::string type() const override { return "adaptive_avgpool2d"; }
  Shape output_shape() const override { return image_shape(ho_, wo_, c_, layout_); }
  std::string attributes() const override { return output_.attributes(); }

 protected:
  // The input image (H, W, C in the model's layout), checked.
  void build_shape(const LayerBuildContext& ctx) {
    const ImageShape in = image_of(ctx.input_shape, ctx.layout, "adaptive_avgpool2d");
    layout_ = ctx.layout;
    h_ = in.h;
    w_ = in.w;
    c_ = in.c;
  }

  AdaptivePool2d output_;
  std::int64_t ho_, wo_;  // output_'s
  std::int64_t h_ = 0, w_ = 0, c_ = 0;
  Layout layout_ = Layout::nhwc;
};

}  // namespace dtnn::layer_parameters
