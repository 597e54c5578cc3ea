// patch_embedding's device-independent half, from which its CPU plugin (patch_embedding.cpp) and
// its CUDA twin (cuda_patch_embedding.cu) derive: the parameters, the input image, the output's
// shape, flops and weights (w [p * p * C, units], b [units]), so that each adds only its passes.
#pragma once
#include <string>
#include <vector>

#include "dtnn/image_shape.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "patch_embedding_parameters.hpp"
#include "weights_and_biases.hpp"

namespace dtnn::layer_parameters {

class PatchEmbeddingBase : public Layer {
 public:
  explicit PatchEmbeddingBase(const Params& p) : s_(p) {}

  std::string type() const override { return "patch_embedding"; }
  Shape output_shape() const override { return Shape{patches(), s_.units}; }
  std::string weights_shape() const override { return w_.shape().str(); }
  std::string attributes() const override { return s_.attributes(); }
  double forward_flops(std::int64_t batch) const override {
    return 2.0 * double(batch * patches()) * double(w_.numel());
  }
  std::vector<Parameter> parameters() override {
    return weights_and_biases(w_, dw_, b_, db_, s_.use_bias);
  }

 protected:
  // The input image in `layout` (checked: it must cut into patches), and on `device` the weights
  // and biases initialised on the host from ctx.seed (so both devices start alike), their
  // gradients at 0.
  void build_weights(const LayerBuildContext& ctx, Layout layout, Device device) {
    image_ = image_of(ctx.input_shape, layout, "patch_embedding");
    s_.check_image(image_.h, image_.w);
    const std::int64_t in = width();
    w_ = initialized(Shape{in, s_.units}, ctx.dtype, s_.init.weights, in, s_.units, ctx.seed,
                     device);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype, Layout::nchw, device);
    if (!s_.use_bias) return;
    b_ =
        initialized(Shape{s_.units}, ctx.dtype, s_.init.biases, in, s_.units, ctx.seed + 1, device);
    db_ = Tensor::zeros(b_.shape(), ctx.dtype, Layout::nchw, device);
  }
  // Patches per image, and the values of one (p * p * C).
  std::int64_t patches() const { return (image_.h / s_.patch) * (image_.w / s_.patch); }
  std::int64_t width() const { return s_.patch * s_.patch * image_.c; }

  PatchEmbedding s_;
  ImageShape image_;
  Tensor w_, dw_, b_, db_;
};

}  // namespace dtnn::layer_parameters
