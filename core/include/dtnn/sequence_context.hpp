// What the layers of a sequence model share besides the activation that flows through them:
//   - the lengths of a padded batch's sequences (padding sits at the end of a sequence). An
//     embedding with a "padding_id" writes them in forward; attention masks the keys past them and
//     sequence_pool averages over the positions before them. Empty: no padding, every position
//     counts.
//   - the decoder's memory in an encoder-decoder: the encoder's output, which the cross-attention
//     layers of the decoder read as keys and values and whose gradient they add to.
// They travel in the layers' build context as the extension "sequence" (layer_extensions.hpp):
// the first sequence layer of a model to ask makes the set its chain shares; an encoder_decoder
// gives its encoder and its decoder scopes of their own, with their own lengths and the decoder the
// memory. Both are per batch: valid from a forward through the backward that follows it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "dtnn/tensor.hpp"

namespace dtnn {

struct SequenceLengths {
  std::vector<std::int64_t> of;  // of[n]: sample n's positions before its padding

  // Keys a sequence of `positions` offers its sample n: all of them without padding, at least
  // one with it (a sequence that is all padding still attends somewhere, and stays finite).
  std::int64_t keys(std::int64_t n, std::int64_t positions) const {
    if (of.empty()) return positions;
    return std::clamp<std::int64_t>(of[static_cast<std::size_t>(n)], 1, positions);
  }
};

struct DecoderMemory {
  Shape shape;   // per sample: (source positions, features)
  Tensor value;  // [n, shape]: the encoder's output for this batch
  Tensor grad;   // [n, shape]: dLoss/d(value); cross-attention layers add into it
  std::shared_ptr<const SequenceLengths> lengths;  // the source's
};

struct SequenceContext {
  static constexpr std::string_view kExtensionName = "sequence";
  std::shared_ptr<SequenceLengths> lengths = std::make_shared<SequenceLengths>();  // this chain's
  std::shared_ptr<DecoderMemory> memory;  // null outside a decoder
};

}  // namespace dtnn
