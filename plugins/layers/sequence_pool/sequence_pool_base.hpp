// sequence_pool's device-independent half, from which its CPU plugin (sequence_pool.cpp) and its
// CUDA twin (cuda_sequence_pool.cu) derive: the parameters, the input's positions and width, the
// output's shape, so that each adds only forward and backward (and where it keeps the lengths).
#pragma once
#include <memory>
#include <string>

#include "dtnn/layer.hpp"
#include "dtnn/sequence_context.hpp"
#include "sequence_pool_parameters.hpp"

namespace dtnn::layer_parameters {

class SequencePoolBase : public Layer {
 public:
  explicit SequencePoolBase(const Params& p) : s_(p) {}
  std::string type() const override { return "sequence_pool"; }
  std::string attributes() const override { return s_.attributes(); }
  Shape output_shape() const override { return Shape{d_}; }

 protected:
  // The input (positions, features), checked; returns the padded samples' lengths that the
  // layers before it write (an embedding with "padding_id").
  std::shared_ptr<SequenceLengths> build_shape(const LayerBuildContext& ctx) {
    SequencePool::check_input(ctx.input_shape);
    t_ = ctx.input_shape[0];
    d_ = ctx.input_shape[1];
    return ctx.extensions.shared<SequenceContext>().lengths;
  }

  SequencePool s_;
  std::int64_t t_ = 0, d_ = 0;
};

}  // namespace dtnn::layer_parameters
