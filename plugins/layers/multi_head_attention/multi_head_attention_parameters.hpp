// The parameters of multi_head_attention, with their defaults (what its CPU plugin and its CUDA
// twin both declare), and the struct that reads and checks them once for both, so the two accept
// and refuse alike.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/sequence_context.hpp"
#include "initializers.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kMultiHeadAttentionParameters =
    R"({"heads": 1, "head_width": 0, "causal": false, "cross": false,
    "use_bias": true, "kernel": "auto", "weights_initializer": "glorot_uniform", "biases_initializer": "zeros"})";

// multi_head_attention: "heads", "head_width" (0: the features / heads), "causal", "cross",
// "use_bias", "kernel" (the CPU's: "stored" keeps the probabilities for backward, "fused" works
// by blocks and keeps one value per query row, "auto" picks), the initialisers.
struct MultiHeadAttention {
  std::int64_t heads, head_width;
  bool causal, cross, use_bias;
  std::string kernel;
  Initializers init;
  explicit MultiHeadAttention(const Params& p)
      : heads(p.get_int("heads")),
        head_width(p.get_int("head_width")),
        causal(p.get_bool("causal")),
        cross(p.get_bool("cross")),
        use_bias(p.get_bool("use_bias")),
        kernel(p.get_string("kernel")),
        init(p) {
    if (heads <= 0) p.fail("heads", "a positive number of heads");
    if (head_width < 0) p.fail("head_width", "a positive width, or 0 for the features / heads");
    if (kernel != "auto" && kernel != "stored" && kernel != "fused")
      p.fail("kernel", "\"auto\", \"stored\" or \"fused\"");
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

}  // namespace dtnn::layer_parameters
