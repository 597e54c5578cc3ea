// embedding: token ids to vectors. x: [N, T] ids (stored as values), w: [vocab, units],
// y: [N, T, units], y[n, t] = w[x[n, t]].
// Backward adds each position's dy to the row of its id: only the rows the batch touched change
// (the rest of dw stays as it was). The ids have no gradient: dx, when asked for, is zero.
// With "padding_id" P, a sequence ends at its first P: forward writes each sample's length for the
// attention and pooling layers after it (dtnn/sequence_context.hpp), which then ignore the padding.
#include <algorithm>
#include <cmath>
#include <string>

#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

constexpr const char* kParameters = R"({"vocab": 0, "units": 0, "padding_id": -1,
    "weights_initializer": "normal"})";

class Embedding final : public Layer {
 public:
  explicit Embedding(const Params& p)
      : vocab_(p.get_int("vocab")),
        units_(p.get_int("units")),
        padding_id_(p.get_int("padding_id")),
        init_(p.get_string("weights_initializer")) {
    if (vocab_ <= 0) p.fail("vocab", "a positive vocabulary size (\"$vocab\": the dataset's)");
    if (units_ <= 0) p.fail("units", "a positive vector width");
    if (padding_id_ < -1 || padding_id_ >= vocab_)
      p.fail("padding_id", "-1 (no padding) or an id below \"vocab\"");
    check_initializer(init_, p.key_path("weights_initializer"));
  }

  std::string type() const override { return "embedding"; }
  Shape output_shape() const override {
    Shape s = input_;
    s.push_back(units_);
    return s;
  }
  std::string weights_shape() const override { return w_.shape().str(); }
  std::string attributes() const override {
    return "vocab=" + std::to_string(vocab_) +
           (padding_id_ >= 0 ? " padding_id=" + std::to_string(padding_id_) : "");
  }

  void build(const LayerBuildContext& ctx) override {
    input_ = ctx.input_shape;
    if (input_.rank() >= Shape::kMaxRank)
      throw Error("embedding: input " + input_.str() + " has too many axes");
    w_ = Tensor::empty(Shape{vocab_, units_}, ctx.dtype);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype);
    initialize(w_, init_, vocab_, units_, ctx.seed);
    if (padding_id_ >= 0) {
      if (input_.rank() != 1)
        throw Error("embedding: \"padding_id\" needs sequences of ids (positions), got " +
                    input_.str());
      lengths_ = ctx.sequence.lengths;
    }
  }

  std::vector<Parameter> parameters() override { return {{"weights", w_, dw_}}; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* ids = x.data<T>();
      const std::int64_t tokens = x.numel();
      check_ids(ids, tokens);
      if (lengths_) write_lengths(ids, x.dim(0));
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
  // Sample n's length: the position of its first padding id.
  template <class T>
  void write_lengths(const T* ids, std::int64_t n) {
    const std::int64_t t = input_[0];
    lengths_->of.resize(static_cast<std::size_t>(n));
    for (std::int64_t s = 0; s < n; ++s) {
      const T* row = ids + s * t;
      lengths_->of[static_cast<std::size_t>(s)] = std::find(row, row + t, T(padding_id_)) - row;
    }
  }

  // An id outside [0, vocab) or not whole is the data's or the model file's mistake: say which.
  template <class T>
  void check_ids(const T* ids, std::int64_t n) const {
    for (std::int64_t i = 0; i < n; ++i)
      if (!(ids[i] >= 0 && ids[i] < T(vocab_)) || ids[i] != std::floor(ids[i]))
        throw Error("embedding: input position " + std::to_string(i) + " holds " +
                    std::to_string(double(ids[i])) + ", not a token id in [0, " +
                    std::to_string(vocab_) +
                    "): is the dataset a token dataset, and \"vocab\" its vocabulary?");
  }

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
                   .parameters = kParameters, .traits = kTraits, .factory = create)
