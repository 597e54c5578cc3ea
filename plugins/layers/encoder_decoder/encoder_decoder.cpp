// encoder_decoder: a sequence-to-sequence transformer's two stacks as one layer (Vaswani et al.
// 2017; PyDTNN's EncoderDecoder). x: [N, S + T] token ids, each sample the source's S ids and then
// the decoder's T input ids (the target shifted right behind a start token, as a seq2seq dataset
// gives them); y: the decoder's output, [N, T, ...].
//   {"type": "encoder_decoder", "source_length": "$source_length",
//    "encoder": [layers on the source ids],
//    "decoder": [layers on the decoder's ids; multi_head_attention {"cross": true} in them reads
//                the encoder's output]}
// The encoder's output is the decoder's memory (dtnn/sequence_context.hpp): the cross-attention
// layers add its gradient up in backward, and the encoder's backward starts from it. Each stack has
// its own padding lengths (its embedding's "padding_id"); cross-attention masks with the
// source's. The ids have no gradient: dx, when asked for, is zero.
// The layer only arranges its two stacks, so one source serves both devices: built again with
// DTNN_ENCODER_DECODER_CUDA it is the cuda twin (its stacks then build the layers' twins, its
// buffers live on the GPU, and a batch's ids are split by the device runtime's copies).
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>

#include "dtnn/device.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/layer_chain.hpp"
#include "dtnn/model.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/sequence_context.hpp"
#ifdef DTNN_ENCODER_DECODER_CUDA
#include "cuda_plugin.hpp"
#endif

namespace {

using namespace dtnn;

class EncoderDecoder final : public Layer {
 public:
  explicit EncoderDecoder(const Params& p) : params_(p), source_(p.get_int("source_length")) {
    if (source_ <= 0)
      p.fail("source_length",
             "the source's positions at the start of each sample (\"$source_length\": the "
             "dataset's)");
  }

  std::string type() const override { return "encoder_decoder"; }
  Shape output_shape() const override { return decoder_.output_shape(); }
  std::string attributes() const override {
    return "source=" + std::to_string(source_) + " target=" + std::to_string(target_) +
           " encoder=" + std::to_string(encoder_.size()) +
           " layers decoder=" + std::to_string(decoder_.size()) + " layers";
  }

  void build(const LayerBuildContext& ctx) override {
    if (ctx.input_shape.rank() != 1 || ctx.input_shape[0] <= source_)
      throw Error("encoder_decoder: expected a sample of " + std::to_string(source_) +
                  " source ids and at least one decoder id, got " + ctx.input_shape.str());
    target_ = ctx.input_shape[0] - source_;
    device_ = ctx.device;
    const std::int64_t n = ctx.max_batch;

    LayerBuildContext c = ctx;
    c.needs_input_gradient = false;  // ids
    c.input_shape = Shape{source_};
    c.seed = Rng::derive(ctx.seed, 1);
    c.extensions = ctx.extensions.fork();  // the encoder's sequences
    c.extensions.set(std::make_shared<SequenceContext>());
    encoder_.build(stack("encoder"), c);
    if (encoder_.output_shape().rank() != 2)
      throw Error(params_.key_path("encoder") +
                  ": expected to end in a sequence (positions, features), got " +
                  encoder_.output_shape().str());
    memory_ = std::make_shared<DecoderMemory>();
    memory_->shape = encoder_.output_shape();
    memory_->grad = Tensor::empty(memory_->shape.with_batch(n), ctx.dtype, Layout::nchw, device_);
    memory_->lengths = c.extensions.find<SequenceContext>()->lengths;

    c.input_shape = Shape{target_};
    c.seed = Rng::derive(ctx.seed, 2);
    c.extensions = ctx.extensions.fork();  // the decoder's, and its memory
    c.extensions.set(std::make_shared<SequenceContext>(SequenceContext{.memory = memory_}));
    decoder_.build(stack("decoder"), c);

    source_ids_ = Tensor::empty(Shape{n, source_}, ctx.dtype, Layout::nchw, device_);
    target_ids_ = Tensor::empty(Shape{n, target_}, ctx.dtype, Layout::nchw, device_);
  }

  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    const std::int64_t n = x.dim(0);
    Tensor source = source_ids_.slice_batch(0, n), target = target_ids_.slice_batch(0, n);
    split(x, source, target);
    memory_->value = encoder_.forward(source, mode);
    y.copy_from(decoder_.forward(target, mode));
  }

  void backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor* dx) override {
    Tensor dmemory = memory_->grad.slice_batch(0, dy.dim(0));
    dmemory.fill_zero();
    decoder_.backward(dy, nullptr);  // the cross-attention layers fill dmemory
    encoder_.backward(dmemory, nullptr);
    if (dx) dx->fill_zero();
  }

  std::vector<Parameter> parameters() override {
    std::vector<Parameter> all = prefixed("encoder.", encoder_.parameters());
    for (Parameter& p : prefixed("decoder.", decoder_.parameters())) all.push_back(std::move(p));
    return all;
  }
  std::vector<Tensor> state() override {
    std::vector<Tensor> all = encoder_.state();
    for (Tensor& t : decoder_.state()) all.push_back(std::move(t));
    return all;
  }
  std::size_t workspace_bytes() const override {
    return std::max(encoder_.workspace_bytes(), decoder_.workspace_bytes());
  }
  std::size_t inner_activation_bytes() const override {
    return encoder_.activation_bytes() + decoder_.activation_bytes() +
           encoder_.own_gradient_bytes() + decoder_.own_gradient_bytes() + memory_->grad.bytes();
  }
  double forward_flops(std::int64_t batch) const override {
    double flops = 0;
    for (const LayerChain* chain : {&encoder_, &decoder_})
      for (std::size_t i = 0; i < chain->size(); ++i) flops += chain->layer(i).forward_flops(batch);
    return flops;
  }
  std::string report() const override {
    const std::string e = encoder_.report(), d = decoder_.report();
    return e + (!e.empty() && !d.empty() ? "\n" : "") + d;
  }

 private:
  std::vector<LayerSpec> stack(const char* key) const {
    const nlohmann::json& j = params_.json();
    const auto it = j.find(key);
    if (it == j.end() || !it->is_array() || it->empty())
      params_.fail(key, "a non-empty list of layers");
    return parse_layer_list(*it, params_.key_path(key));
  }

  static std::vector<Parameter> prefixed(const std::string& prefix, std::vector<Parameter> ps) {
    for (Parameter& p : ps) p.name = prefix + p.name;
    return ps;
  }

  // x's rows into the source's and the decoder's ids (on a device, two copies per sample).
  void split(const Tensor& x, Tensor& source, Tensor& target) const {
    const std::size_t value = dtype_size(x.dtype());
    const auto* in = static_cast<const std::byte*>(x.raw());
    auto* s = static_cast<std::byte*>(source.raw());
    auto* t = static_cast<std::byte*>(target.raw());
    const std::size_t source_bytes = std::size_t(source_) * value;
    const std::size_t target_bytes = std::size_t(target_) * value;
    for (std::int64_t i = 0; i < x.dim(0); ++i) {
      const std::byte* row = in + std::size_t(i) * (source_bytes + target_bytes);
      copy(s + std::size_t(i) * source_bytes, row, source_bytes);
      copy(t + std::size_t(i) * target_bytes, row + source_bytes, target_bytes);
    }
  }
  void copy(void* to, const void* from, std::size_t bytes) const {
    if (device_ == Device::cpu)
      std::memcpy(to, from, bytes);
    else
      device_runtime(device_).copy(to, from, bytes);
  }

  Params params_;
  std::int64_t source_, target_ = 0;
  Device device_ = Device::cpu;
  LayerChain encoder_, decoder_;
  std::shared_ptr<DecoderMemory> memory_;
  Tensor source_ids_, target_ids_;
};

Plugin* create(const Params& p, const PluginContext&) { return new EncoderDecoder(p); }

}  // namespace

constexpr const char* kParameters = R"({"source_length": 0, "encoder": [], "decoder": []})";

// A whole small transformer, padded source, for the conformance checks.
#define DTNN_SMALL_TRANSFORMER                                                             \
  R"({"source_length": 3,)"                                                                \
  R"( "encoder": [{"type": "embedding", "vocab": 5, "units": 4, "padding_id": 0},)"        \
  R"(             {"type": "multi_head_attention", "heads": 2}, {"type": "layer_norm"}],)" \
  R"( "decoder": [{"type": "embedding", "vocab": 5, "units": 4},)"                         \
  R"(             {"type": "multi_head_attention", "heads": 2, "causal": true},)"          \
  R"(             {"type": "multi_head_attention", "heads": 2, "cross": true},)"           \
  R"(             {"type": "fc", "units": 5, "flatten": false}]})"

#ifdef DTNN_ENCODER_DECODER_CUDA
// The twin against the CPU layer on it: every layer twin of both stacks, cross-attention and the
// decoder memory's gradient.
constexpr const char* kTwinChecks = R"({"twin_checks": [{"params": )" DTNN_SMALL_TRANSFORMER
                                    R"(, "input_nchw": [7], "tokens": 5}]})";
#else
// Gradient-checked end to end (the encoder's parameters get their gradient through the decoder's
// cross-attention).
constexpr const char* kTraits =
    R"({"conformance": [{"params": )" DTNN_SMALL_TRANSFORMER R"(, "input": [7], "tokens": 5}]})";
#endif

#ifdef DTNN_ENCODER_DECODER_CUDA
DTNN_CUDA_LAYER(
    "encoder_decoder",
    "a seq2seq transformer on an NVIDIA GPU: an encoder on the source ids, a decoder on "
    "the target's, cross-attention between them",
    kParameters, kTwinChecks, create)
#else
DTNN_EXPORT_PLUGIN(
        .kind = "layer", .name = "encoder_decoder",
        .description =
            "a seq2seq transformer: an encoder on the source ids, a decoder on the target's, "
            "cross-attention between them",
        .parameters = kParameters, .traits = kTraits, .factory = create)
#endif
