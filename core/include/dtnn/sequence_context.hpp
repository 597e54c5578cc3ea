// What the layers of a sequence model share besides the activation that flows through them:
//   - the lengths of a padded batch's sequences (padding sits at the end of a sequence). An
//     embedding with a "padding_id" writes them in forward; attention masks the keys past them and
//     sequence_pool averages over the positions before them. Empty: no padding, every position
//     counts.
//   - the decoder's memory in an encoder-decoder: the encoder's output, which the cross-attention
//     layers of the decoder read as keys and values and whose gradient they add to.
// The model makes one set for its top-level chain; an encoder_decoder gives its encoder and its
// decoder their own lengths and its decoder the memory. Both are per batch: valid from a forward
// through the backward that follows it.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
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
  std::shared_ptr<SequenceLengths> lengths;  // this chain's sequences'
  std::shared_ptr<DecoderMemory> memory;     // null outside a decoder
};

}  // namespace dtnn
