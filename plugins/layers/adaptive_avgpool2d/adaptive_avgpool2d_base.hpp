// adaptive_avgpool2d's device-independent half, from which its CPU plugin (adaptive_avgpool2d.cpp)
// and its CUDA twin (cuda_adaptive_avgpool2d.cu) derive: the output's size, the input image's in
// the model's layout and the output's shape, so that each adds only forward and backward.
#pragma once
#include <string>

#include "adaptive_avgpool2d_parameters.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"

namespace dtnn::layer_parameters {

class AdaptiveAvgPool2dBase : public Layer {
 public:
  explicit AdaptiveAvgPool2dBase(const Params& p)
      : output_(p), ho_(output_.height), wo_(output_.width) {}
  std::string type() const override { return "adaptive_avgpool2d"; }
  Shape output_shape() const override {
    return layout_ == Layout::nhwc ? Shape{ho_, wo_, c_} : Shape{c_, ho_, wo_};
  }
  std::string attributes() const override { return output_.attributes(); }

 protected:
  // The input image (H, W, C in the model's layout), checked.
  void build_shape(const LayerBuildContext& ctx) {
    const Shape& s = ctx.input_shape;
    if (s.rank() != 3)
      throw Error("adaptive_avgpool2d: expected an image (3 axes), got " + s.str());
    layout_ = ctx.layout;
    h_ = layout_ == Layout::nhwc ? s[0] : s[1];
    w_ = layout_ == Layout::nhwc ? s[1] : s[2];
    c_ = layout_ == Layout::nhwc ? s[2] : s[0];
  }

  AdaptivePool2d output_;
  std::int64_t ho_, wo_;  // output_'s
  std::int64_t h_ = 0, w_ = 0, c_ = 0;
  Layout layout_ = Layout::nhwc;
};

}  // namespace dtnn::layer_parameters
