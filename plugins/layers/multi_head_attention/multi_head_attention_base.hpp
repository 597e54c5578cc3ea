// multi_head_attention's device-independent half, from which its CPU plugin
// (multi_head_attention.cpp) and its CUDA twin (cuda_multi_head_attention.cu) derive: the
// parameters, the sequence's and the keys' sizes, the output's shape, flops, the projections'
// weights and the buffers both passes keep, so that each adds only its passes.
// Self-attention: [Q K V] from one [D, 3E] projection; cross: Q from [D, E], K and V from the
// decoder memory's [Dm, 2E]; the output from [E, D].
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/sequence_context.hpp"
#include "multi_head_attention_parameters.hpp"

namespace dtnn::layer_parameters {

class MultiHeadAttentionBase : public Layer {
 public:
  explicit MultiHeadAttentionBase(const Params& p) : params_(p) {}

  std::string type() const override { return "multi_head_attention"; }
  Shape output_shape() const override { return Shape{t_, d_}; }
  std::string weights_shape() const override {
    return wq_.value.shape().str() + (params_.cross ? " + " + wkv_.value.shape().str() : "") +
           " + " + wo_.value.shape().str();
  }
  std::string attributes() const override { return params_.attributes(); }
  double forward_flops(std::int64_t batch) const override {
    const double rows = double(batch * t_), d = double(d_), e = double(e_);
    const double key_rows = double(batch * s_), dm = double(dm_);
    const double projections =
        params_.cross ? 2 * rows * d * 2 * e + 2 * key_rows * dm * 2 * e : 2 * rows * d * 4 * e;
    const double attention = 4 * double(batch) * double(t_) * double(s_) * e;
    return projections + attention * attention_share();
  }

  std::vector<Parameter> parameters() override {
    std::vector<Parameter> p{wq_};
    if (params_.use_bias) p.push_back(bq_);
    if (params_.cross) {
      p.push_back(wkv_);
      if (params_.use_bias) p.push_back(bkv_);
    }
    p.push_back(wo_);
    if (params_.use_bias) p.push_back(bo_);
    return p;
  }

 protected:
  // The sizes (positions, features; the keys' from the decoder memory for cross-attention), the
  // keys' lengths, and on `device` the weights initialised on the host from ctx.seed (so both
  // devices start alike) and the buffers kept from forward for backward, for ctx.max_batch
  // samples (the probabilities apart: build_probabilities).
  void build_attention(const LayerBuildContext& ctx, Device device) {
    MultiHeadAttention::check_input(ctx.input_shape);
    t_ = ctx.input_shape[0];
    d_ = ctx.input_shape[1];
    head_ = params_.head_of(d_);
    e_ = params_.heads * head_;
    memory_ = params_.memory(ctx);
    if (params_.cross) {
      s_ = memory_->shape[0];
      dm_ = memory_->shape[1];
      lengths_ = memory_->lengths;
    } else {
      s_ = t_;
      dm_ = d_;
      lengths_ = ctx.extensions.shared<SequenceContext>().lengths;
    }
    const DType dt = ctx.dtype;
    auto parameter = [&](const std::string& name, const Shape& shape, const std::string& init,
                         std::int64_t fan_in, std::int64_t fan_out, std::uint64_t seed) {
      return Parameter{name, initialized(shape, dt, init, fan_in, fan_out, seed, device),
                       Tensor::zeros(shape, dt, Layout::nchw, device)};
    };
    const std::string& wi = params_.init.weights;
    const std::string& bi = params_.init.biases;
    const std::string q = params_.cross ? "_q" : "_qkv";
    const std::int64_t q_width = params_.cross ? e_ : 3 * e_;
    wq_ = parameter("weights" + q, Shape{d_, q_width}, wi, d_, e_, ctx.seed);
    wo_ = parameter("weights_out", Shape{e_, d_}, wi, e_, d_, ctx.seed + 1);
    if (params_.cross)
      wkv_ = parameter("weights_kv", Shape{dm_, 2 * e_}, wi, dm_, e_, ctx.seed + 4);
    if (params_.use_bias) {
      bq_ = parameter("biases" + q, Shape{q_width}, bi, d_, d_, ctx.seed + 2);
      bo_ = parameter("biases_out", Shape{d_}, bi, d_, d_, ctx.seed + 3);
      if (params_.cross) bkv_ = parameter("biases_kv", Shape{2 * e_}, bi, d_, d_, ctx.seed + 5);
    }
    const std::int64_t n = ctx.max_batch;
    auto buffer = [&](const Shape& s) { return Tensor::empty(s, dt, Layout::nchw, device); };
    q_ = buffer(Shape{n, t_, q_width});
    dq_ = buffer(q_.shape());
    if (params_.cross) {
      kv_ = buffer(Shape{n, s_, 2 * e_});
      dkv_ = buffer(kv_.shape());
    }
    context_ = buffer(Shape{n, t_, e_});
    dcontext_ = buffer(context_.shape());
  }

  // The probabilities [N, H, T, S] kept from forward for backward, on `device`.
  void build_probabilities(const LayerBuildContext& ctx, Device device) {
    probs_ =
        Tensor::empty(Shape{ctx.max_batch, params_.heads, t_, s_}, ctx.dtype, Layout::nchw, device);
  }

  // The share of the T x S products of attention a pass computes (all of them here).
  virtual double attention_share() const { return 1.0; }

  MultiHeadAttention params_;
  // Positions T, keys S, features D, the memory's features Dm, a head's width, all heads' E.
  std::int64_t t_ = 0, s_ = 0, d_ = 0, dm_ = 0, head_ = 0, e_ = 0;
  std::shared_ptr<const SequenceLengths> lengths_;  // the keys' (null: none padded)
  std::shared_ptr<DecoderMemory> memory_;           // cross-attention's keys and values
  Parameter wq_, bq_, wkv_, bkv_, wo_, bo_;
  // [N, T, 3E] (cross: [N, T, E]) queries (keys, values), [N, S, 2E] cross-attention's keys and
  // values, [N, T, E] the heads' context, [N, H, T, S] the attention probabilities (when kept);
  // gradients.
  Tensor q_, dq_, kv_, dkv_, context_, dcontext_, probs_;
};

}  // namespace dtnn::layer_parameters
