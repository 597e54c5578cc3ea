// embedding's device-independent half, from which its CPU plugin (embedding.cpp) and its CUDA
// twin (cuda_embedding.cu) derive: the parameters, shapes, the table of vectors and the padded
// sequences' lengths, so that each adds only forward and backward on its device.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/sequence_context.hpp"
#include "embedding_parameters.hpp"

namespace dtnn::layer_parameters {

class EmbeddingBase : public Layer {
 public:
  explicit EmbeddingBase(const Params& p) : s_(p) {}

  std::string type() const override { return "embedding"; }
  Shape output_shape() const override { return s_.output_shape(input_); }
  std::string weights_shape() const override { return w_.shape().str(); }
  std::string attributes() const override { return s_.attributes(); }
  std::vector<Parameter> parameters() override { return {{"weights", w_, dw_}}; }

 protected:
  // The input's shape (checked), on `device` the table w [vocab, units] (initialised on the host
  // from ctx.seed, so both devices start alike) and its gradient at 0, and with "padding_id" the
  // lengths the layers after it read.
  void build_table(const LayerBuildContext& ctx, Device device) {
    input_ = ctx.input_shape;
    s_.output_shape(input_);  // checks the input's rank
    w_ = initialized(Shape{s_.vocab, s_.units}, ctx.dtype, s_.init, s_.vocab, s_.units, ctx.seed,
                     device);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype, Layout::nchw, device);
    if (s_.padding_id >= 0) {
      if (input_.rank() != 1)
        throw Error("embedding: \"padding_id\" needs sequences of ids (positions), got " +
                    input_.str());
      lengths_ = ctx.extensions.shared<SequenceContext>().lengths;
    }
  }

  Embedding s_;
  Shape input_;
  Tensor w_, dw_;
  std::shared_ptr<SequenceLengths> lengths_;  // written when padding_id is set
};

}  // namespace dtnn::layer_parameters
