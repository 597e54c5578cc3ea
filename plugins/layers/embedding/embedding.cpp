// embedding: token ids to vectors. x: [N, T] ids (stored as values), w: [vocab, units],
// y: [N, T, units], y[n, t] = w[x[n, t]].
// Backward adds each position's dy to the row of its id: only the rows the batch touched change
// (the rest of dw stays as it was). The ids have no gradient: dx, when asked for, is zero.
// With "padding_id" P, a sequence ends at its first P: forward writes each sample's length for the
// attention and pooling layers after it (dtnn/sequence_context.hpp), which then ignore the padding.
#include <string>

#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "embedding_base.hpp"
#include "token_ids.hpp"

namespace {

using namespace dtnn;

class Embedding final : public layer_parameters::EmbeddingBase {
 public:
  using EmbeddingBase::EmbeddingBase;
  void build(const LayerBuildContext& ctx) override { build_table(ctx, Device::cpu); }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* ids = x.data<T>();
      const std::int64_t tokens = x.numel();
      token_ids::check(ids, tokens, s_.vocab);
      if (lengths_) token_ids::write_lengths(*lengths_, ids, x.dim(0), input_[0], s_.padding_id);
      const T* w = w_.data<T>();
      T* yp = y.data<T>();
      parallel_for(tokens, 256, [&](std::int64_t i) {
        const T* row = w + static_cast<std::int64_t>(ids[i]) * s_.units;
        T* out = yp + i * s_.units;
        for (std::int64_t j = 0; j < s_.units; ++j) out[j] = row[j];
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
        T* __restrict row = dw + static_cast<std::int64_t>(ids[i]) * s_.units;
        const T* __restrict g = dyp + i * s_.units;
        for (std::int64_t j = 0; j < s_.units; ++j) row[j] += g[j];
      }
    });
    if (dx) dx->fill_zero();
  }
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
