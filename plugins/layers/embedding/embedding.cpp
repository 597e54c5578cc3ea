// embedding: token ids to vectors. x: [N, T] ids (stored as values), w: [vocab, units],
// y: [N, T, units], y[n, t] = w[x[n, t]].
// Backward adds each position's dy to the row of its id: only the rows the batch touched change
// (the rest of dw stays as it was). The ids have no gradient: dx, when asked for, is zero.
// With "padding_id" P, a sequence ends at its first P: forward writes each sample's length for the
// attention and pooling layers after it (dtnn/sequence_context.hpp), which then ignore the padding.
#include <string>

#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/sequence_context.hpp"
#include "layer_parameters.hpp"
#include "token_ids.hpp"

namespace {

using namespace dtnn;

class Embedding final : public Layer {
 public:
  explicit Embedding(const Params& p)
      : params_(p),
        vocab_(params_.vocab),
        units_(params_.units),
        padding_id_(params_.padding_id),
        init_(params_.init) {}

  std::string type() const override { return "embedding"; }
  Shape output_shape() const override { return params_.output_shape(input_); }
  std::string weights_shape() const override { return w_.shape().str(); }
  std::string attributes() const override { return params_.attributes(); }

  void build(const LayerBuildContext& ctx) override {
    input_ = ctx.input_shape;
    params_.output_shape(input_);  // checks the input's rank
    w_ = Tensor::empty(Shape{vocab_, units_}, ctx.dtype);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype);
    initialize(w_, init_, vocab_, units_, ctx.seed);
    if (padding_id_ >= 0) {
      if (input_.rank() != 1)
        throw Error("embedding: \"padding_id\" needs sequences of ids (positions), got " +
                    input_.str());
      lengths_ = ctx.extensions.shared<SequenceContext>().lengths;
    }
  }

  std::vector<Parameter> parameters() override { return {{"weights", w_, dw_}}; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* ids = x.data<T>();
      const std::int64_t tokens = x.numel();
      token_ids::check(ids, tokens, vocab_);
      if (lengths_) token_ids::write_lengths(*lengths_, ids, x.dim(0), input_[0], padding_id_);
      const T* w = w_.data<T>();
      T* yp = y.data<T>();
      parallel_for(tokens, 256, [&](std::int64_t i) {
        const T* row = w + static_cast<std::int64_t>(ids[i]) * units_;
        T* out = yp + i * units_;
        for (std::int64_t j = 0; j < units_; ++j) out[j] = row[j];
      });
    });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* ids = x.data<T>();
      const T* dyp = dy.data<T>();
      T* dw = dw_.data<T>();
      // Serial over positions (two may share an id); each row add is a vector loop.
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        T* __restrict row = dw + static_cast<std::int64_t>(ids[i]) * units_;
        const T* __restrict g = dyp + i * units_;
        for (std::int64_t j = 0; j < units_; ++j) row[j] += g[j];
      }
    });
    if (dx) dx->fill_zero();
  }

 private:
  layer_parameters::Embedding params_;
  std::int64_t vocab_, units_, padding_id_;
  std::string init_;
  Shape input_;
  std::shared_ptr<SequenceLengths> lengths_;  // written when padding_id is set
  Tensor w_, dw_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Embedding(p); }

}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp): "tokens"
// makes the inputs whole ids below it.
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"vocab": 7, "units": 5}, "input": [6], "tokens": 7, "batch": 3}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "embedding",
                   .description = "token ids to learned vectors: y[n, t] = w[x[n, t]]",
                   .parameters = dtnn::layer_parameters::kEmbeddingParameters, .traits = kTraits,
                   .factory = create)
