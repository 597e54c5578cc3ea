// The parameters of the layers that have a CPU plugin and a CUDA twin: each layer's parameters
// with their defaults (what both descriptors declare), and the struct that reads and checks them
// once for both, so the two accept and refuse alike.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/sequence_context.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::layer_parameters {

// The parameters, with their defaults, that each layer's CPU plugin and CUDA twin declare.
inline constexpr const char* kFcParameters =
    R"({"units": 0, "use_bias": true, "weights_initializer": "glorot_uniform",
        "biases_initializer": "zeros", "flatten": true})";
inline constexpr const char* kConv2dParameters =
    R"({"filters": 0, "kernel": [3, 3], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
        "groups": 1, "use_bias": true, "algorithm": "", "algorithm_params": {}, "weights_initializer": "glorot_uniform",
        "biases_initializer": "zeros", "activation": "", "batchnorm": null})";
inline constexpr const char* kDepthwiseConv2dParameters =
    R"({"kernel": [3, 3], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
        "use_bias": true, "weights_initializer": "glorot_uniform", "biases_initializer": "zeros"})";
inline constexpr const char* kBatchnormParameters =
    R"({"momentum": 0.9, "epsilon": 1e-5, "gamma": 1.0, "beta": 0.0, "sync_stats": false,
        "activation": ""})";
inline constexpr const char* kDropoutParameters = R"({"rate": 0.5})";
inline constexpr const char* kLeakyReluParameters = R"({"negative_slope": 0.01})";
inline constexpr const char* kGeluParameters = R"({"approximate": "none"})";
inline constexpr const char* kLayerNormParameters = R"({"epsilon": 1e-5})";
inline constexpr const char* kEmbeddingParameters =
    R"({"vocab": 0, "units": 0, "padding_id": -1, "weights_initializer": "normal"})";
inline constexpr const char* kMultiHeadAttentionParameters =
    R"({"heads": 1, "head_width": 0, "causal": false, "cross": false,
    "use_bias": true, "weights_initializer": "glorot_uniform", "biases_initializer": "zeros"})";
inline constexpr const char* kSequencePoolParameters = R"({"mode": "mean"})";
inline constexpr const char* kUpsample2dParameters = R"({"size": [2, 2]})";
inline constexpr const char* kConv2dTransposeParameters =
    R"({"filters": 0, "kernel": [2, 2], "stride": [2, 2], "padding": [0, 0], "dilation": [1, 1],
        "output_padding": [0, 0], "use_bias": true, "algorithm": "", "algorithm_params": {},
        "weights_initializer": "glorot_uniform", "biases_initializer": "zeros"})";
inline constexpr const char* kPatchEmbeddingParameters =
    R"({"patch": 4, "units": 0, "use_bias": true, "weights_initializer": "glorot_uniform",
    "biases_initializer": "zeros"})";
inline constexpr const char* kPositionalEncodingParameters =
    R"({"kind": "sinusoidal", "weights_initializer": "normal"})";
inline constexpr const char* kPool2dParameters =  // maxpool2d, avgpool2d
    R"({"pool": [2, 2], "stride": [0, 0], "padding": [0, 0]})";
inline constexpr const char* kBlockParameters = R"({"paths": [[], []]})";  // add, concat
inline constexpr const char* kMultiplicationParameters =
    R"({"paths": [[], []], "transpose_b": false})";
inline constexpr const char* kAdaptivePool2dParameters =
    R"({"output_height": 1, "output_width": 1})";

// The two initialiser names of a layer with weights and biases, checked.
struct Initializers {
  std::string weights, biases;
  explicit Initializers(const Params& p)
      : weights(p.get_string("weights_initializer")), biases(p.get_string("biases_initializer")) {
    check_initializer(weights, p.key_path("weights_initializer"));
    check_initializer(biases, p.key_path("biases_initializer"));
  }
};

// fc: {"units", "use_bias", "weights_initializer", "biases_initializer"}.
struct Fc {
  std::int64_t units;
  bool use_bias;
  Initializers init;
  // true: each sample is one row (its values taken flat); false: each position of the last axis
  // is a row, {..., in} -> {..., units} (Keras' Dense, a transformer's projections).
  bool flatten;
  explicit Fc(const Params& p)
      : units(p.get_int("units")),
        use_bias(p.get_bool("use_bias")),
        init(p),
        flatten(p.get_bool("flatten")) {
    if (units <= 0) p.fail("units", "a positive number of output units");
  }
  // Input features per row and the per-sample output shape for a per-sample input.
  std::int64_t features(const Shape& input) const {
    return flatten ? input.numel() : input[input.rank() - 1];
  }
  Shape output_shape(const Shape& input) const {
    if (flatten) return Shape{units};
    Shape out = input;
    out[out.rank() - 1] = units;
    return out;
  }
};

// conv2d: "filters" and the window into a geometry (its input set at build), "use_bias",
// "activation" ("" or "relu"), the initialisers. "batchnorm" is each plugin's own.
struct Conv2d {
  ConvGeometry geometry;
  bool use_bias;
  bool relu;
  Initializers init;
  explicit Conv2d(const Params& p) : use_bias(p.get_bool("use_bias")), init(p) {
    geometry.k = p.get_int("filters");
    if (geometry.k <= 0) p.fail("filters", "a positive number of filters");
    geometry.read_window(p);
    geometry.groups = p.get_int("groups");
    if (geometry.groups < 1 || geometry.k % geometry.groups != 0)
      p.fail("groups", "a positive divisor of filters (" + std::to_string(geometry.k) + ")");
    const std::string activation = p.get_string("activation");
    relu = activation == "relu";
    if (!relu && !activation.empty()) p.fail("activation", "\"\" or \"relu\" (conv+relu fused)");
  }
};

// depthwise_conv2d: the window into a geometry (one filter per channel: no "filters"),
// "use_bias", the initialisers.
struct DepthwiseConv2d {
  ConvGeometry geometry;
  bool use_bias;
  Initializers init;
  explicit DepthwiseConv2d(const Params& p) : use_bias(p.get_bool("use_bias")), init(p) {
    geometry.read_window(p);
  }
};

// batchnorm: "momentum" in [0, 1), "epsilon" > 0, the initial "gamma" and "beta", "sync_stats",
// "activation" ("" or "relu": batchnorm+relu fused). What a device cannot do is its plugin's to
// refuse.
struct Batchnorm {
  double momentum, epsilon, gamma, beta;
  bool sync_stats, relu;
  explicit Batchnorm(const Params& p)
      : momentum(p.get_double("momentum")),
        epsilon(p.get_double("epsilon")),
        gamma(p.get_double("gamma")),
        beta(p.get_double("beta")),
        sync_stats(p.get_bool("sync_stats")),
        relu(p.get_string("activation") == "relu") {
    if (!relu && !p.get_string("activation").empty())
      p.fail("activation", "\"\" or \"relu\" (batchnorm+relu fused)");
    if (!(momentum >= 0.0 && momentum < 1.0)) p.fail("momentum", "a number in [0, 1)");
    if (!(epsilon > 0.0)) p.fail("epsilon", "a positive number");
  }
};

// embedding: "vocab" and "units" positive, "padding_id" -1 or an id, "weights_initializer".
struct Embedding {
  std::int64_t vocab, units, padding_id;
  std::string init;
  explicit Embedding(const Params& p)
      : vocab(p.get_int("vocab")),
        units(p.get_int("units")),
        padding_id(p.get_int("padding_id")),
        init(p.get_string("weights_initializer")) {
    if (vocab <= 0) p.fail("vocab", "a positive vocabulary size (\"$vocab\": the dataset's)");
    if (units <= 0) p.fail("units", "a positive vector width");
    if (padding_id < -1 || padding_id >= vocab)
      p.fail("padding_id", "-1 (no padding) or an id below \"vocab\"");
    check_initializer(init, p.key_path("weights_initializer"));
  }
  std::string attributes() const {
    return "vocab=" + std::to_string(vocab) +
           (padding_id >= 0 ? " padding_id=" + std::to_string(padding_id) : "");
  }
  // Per-sample output shape: the input's with "units" appended.
  Shape output_shape(const Shape& input) const {
    if (input.rank() >= Shape::kMaxRank)
      throw Error("embedding: input " + input.str() + " has too many axes");
    Shape s = input;
    s.push_back(units);
    return s;
  }
};

// positional_encoding: "kind" ("sinusoidal" or "learned"), "weights_initializer".
struct PositionalEncoding {
  bool learned;
  std::string init;
  explicit PositionalEncoding(const Params& p)
      : learned(p.get_string("kind") == "learned"), init(p.get_string("weights_initializer")) {
    if (!learned && p.get_string("kind") != "sinusoidal")
      p.fail("kind", "\"sinusoidal\" or \"learned\"");
    check_initializer(init, p.key_path("weights_initializer"));
  }
  // The table p [positions, width] the input's shape needs, on the host: the learned one
  // initialised from seed, the sinusoidal one (Vaswani et al. 2017) computed.
  Tensor table(const Shape& input, DType dtype, std::uint64_t seed) const {
    if (input.rank() != 2)
      throw Error("positional_encoding: expected a sequence (positions, features), got " +
                  input.str());
    const std::int64_t positions = input[0], width = input[1];
    Tensor p = Tensor::empty(input, dtype);
    if (learned) {
      initialize(p, init, positions, width, seed);
      return p;
    }
    dispatch_dtype(dtype, [&](auto z) {
      using T = decltype(z);
      T* out = p.data<T>();
      for (std::int64_t t = 0; t < positions; ++t)
        for (std::int64_t i = 0; i < width; ++i) {
          const double angle = double(t) / std::pow(10000.0, double(2 * (i / 2)) / double(width));
          out[t * width + i] = T(i % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    });
    return p;
  }
};

// multi_head_attention: "heads", "head_width" (0: the features / heads), "causal", "cross",
// "use_bias", the initialisers.
struct MultiHeadAttention {
  std::int64_t heads, head_width;
  bool causal, cross, use_bias;
  Initializers init;
  explicit MultiHeadAttention(const Params& p)
      : heads(p.get_int("heads")),
        head_width(p.get_int("head_width")),
        causal(p.get_bool("causal")),
        cross(p.get_bool("cross")),
        use_bias(p.get_bool("use_bias")),
        init(p) {
    if (heads <= 0) p.fail("heads", "a positive number of heads");
    if (head_width < 0) p.fail("head_width", "a positive width, or 0 for the features / heads");
    if (causal && cross)
      p.fail("causal", "false with \"cross\": true (a decoder sees all of the encoder's output)");
  }
  std::string attributes() const {
    return "heads=" + std::to_string(heads) +
           (head_width ? " head_width=" + std::to_string(head_width) : "") +
           (causal ? " causal" : "") + (cross ? " cross" : "");
  }
  // The per-sample input (positions, features), checked.
  static void check_input(const Shape& input) {
    if (input.rank() != 2)
      throw Error("multi_head_attention: expected a sequence (positions, features), got " +
                  input.str());
  }
  // Cross-attention's decoder memory (null for self-attention); an Error outside a decoder.
  std::shared_ptr<DecoderMemory> memory(const LayerBuildContext& ctx) const {
    if (!cross) return nullptr;
    const SequenceContext* sequence = ctx.extensions.find<SequenceContext>();
    if (!sequence || !sequence->memory || sequence->memory->shape.rank() != 2)
      throw Error(
          "multi_head_attention: \"cross\": true attends to a decoder's memory: put it in the "
          "\"decoder\" of an encoder_decoder");
    return sequence->memory;
  }
  // The width of a head for `features` input features; an Error when they do not split.
  std::int64_t head_of(std::int64_t features) const {
    if (head_width == 0 && features % heads != 0)
      throw Error("multi_head_attention: " + std::to_string(features) +
                  " features do not split into " + std::to_string(heads) +
                  " heads (give \"head_width\")");
    return head_width ? head_width : features / heads;
  }
};

// sequence_pool: "mode", "mean" or "first".
struct SequencePool {
  bool mean;
  explicit SequencePool(const Params& p) : mean(p.get_string("mode") == "mean") {
    if (!mean && p.get_string("mode") != "first") p.fail("mode", "\"mean\" or \"first\"");
  }
  std::string attributes() const { return mean ? "mean" : "first"; }
  // The per-sample input (positions, features), checked.
  static void check_input(const Shape& input) {
    if (input.rank() != 2)
      throw Error("sequence_pool: expected a sequence (positions, features), got " + input.str());
  }
};

// patch_embedding: "patch" and "units" positive, "use_bias", the initialisers.
struct PatchEmbedding {
  std::int64_t patch, units;
  bool use_bias;
  Initializers init;
  explicit PatchEmbedding(const Params& p)
      : patch(p.get_int("patch")),
        units(p.get_int("units")),
        use_bias(p.get_bool("use_bias")),
        init(p) {
    if (patch < 1) p.fail("patch", "a positive patch size");
    if (units < 1) p.fail("units", "a positive vector width");
  }
  std::string attributes() const { return "patch=" + std::to_string(patch); }
  // An Error unless an h x w image cuts into patches.
  void check_image(std::int64_t h, std::int64_t w) const {
    if (h % patch != 0 || w % patch != 0)
      throw Error("patch_embedding: a " + std::to_string(h) + "x" + std::to_string(w) +
                  " image does not cut into " + std::to_string(patch) + "x" +
                  std::to_string(patch) + " patches");
  }
};

// upsample2d: "size", the whole factors (rows, columns), each from 1 to 64.
struct Upsample2d {
  std::int64_t rows, columns;
  explicit Upsample2d(const Params& p) {
    const auto [sh, sw] = p.get_pair("size", 1);
    if (sh > 64 || sw > 64) p.fail("size", "factors from 1 to 64");
    rows = sh, columns = sw;
  }
  std::string attributes() const {
    return "size=(" + std::to_string(rows) + "," + std::to_string(columns) + ") nearest";
  }
};

// conv2d_transpose: "filters", the window, "output_padding", "use_bias", the initialisers; and G,
// the convolution the layer transposes (its input has the layer's output shape).
struct Conv2dTranspose {
  std::int64_t filters;
  bool use_bias;
  Initializers init;
  ConvGeometry window;
  std::int64_t output_padding_h = 0, output_padding_w = 0;
  explicit Conv2dTranspose(const Params& p)
      : filters(p.get_int("filters")), use_bias(p.get_bool("use_bias")), init(p) {
    if (filters <= 0) p.fail("filters", "a positive number of filters");
    window.read_window(p);
    const auto [oph, opw] = p.get_pair("output_padding", 0);
    if (oph >= std::max(window.stride_h, window.dilation_h) ||
        opw >= std::max(window.stride_w, window.dilation_w))
      p.fail("output_padding",
             "less than the stride or the dilation (it picks one of the sizes "
             "a strided output may have had)");
    output_padding_h = oph, output_padding_w = opw;
  }
  // G for a per-sample input `in` (an image in `layout`), batches up to `batch`.
  ConvGeometry geometry(const Shape& in, Layout layout, DType dtype, std::int64_t batch) const {
    if (in.rank() != 3)
      throw Error("conv2d_transpose expects image input (H, W, C), got " + in.str());
    const bool nhwc = layout == Layout::nhwc;
    const std::int64_t h_in = nhwc ? in[0] : in[1], w_in = nhwc ? in[1] : in[2];
    ConvGeometry g = window;
    g.layout = layout;
    g.dtype = dtype;
    g.n = batch;
    g.k = nhwc ? in[2] : in[0];  // G's output channels: this layer's input channels
    g.c = filters;
    g.h = (h_in - 1) * g.stride_h - 2 * g.pad_h + g.dilation_h * (g.kh - 1) + 1 + output_padding_h;
    g.w = (w_in - 1) * g.stride_w - 2 * g.pad_w + g.dilation_w * (g.kw - 1) + 1 + output_padding_w;
    if (g.h < 1 || g.w < 1 || g.ho() != h_in || g.wo() != w_in)
      throw Error("conv2d_transpose: " + in.str() + " with " + g.window_str() +
                  " gives no output (the padding takes more than the kernel spreads)");
    return g;
  }
};

// adaptive_avgpool2d: the output's "output_height" and "output_width", each at least 1.
struct AdaptivePool2d {
  std::int64_t height, width;
  explicit AdaptivePool2d(const Params& p)
      : height(p.get_int("output_height")), width(p.get_int("output_width")) {
    if (height < 1) p.fail("output_height", "a positive number of rows");
    if (width < 1) p.fail("output_width", "a positive number of columns");
  }
  std::string attributes() const {
    return "output=(" + std::to_string(height) + "," + std::to_string(width) + ")";
  }
};

// dropout's "rate", in [0, 1).
inline double dropout_rate(const Params& p) {
  const double rate = p.get_double("rate");
  if (rate < 0.0 || rate >= 1.0) p.fail("rate", "a number in [0, 1)");
  return rate;
}

}  // namespace dtnn::layer_parameters
