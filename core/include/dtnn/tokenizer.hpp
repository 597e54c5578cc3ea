// Tokenizer: text to token ids and back, as a token dataset made its vocabulary. `dtnn generate`
// encodes a prompt with it and decodes what the model samples.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Tokenizer {
 public:
  virtual ~Tokenizer();
  virtual std::int64_t size() const = 0;  // ids are [0, size)
  // An Error naming the first character the vocabulary does not hold.
  virtual std::vector<std::int64_t> encode(std::string_view text) const = 0;
  // Ids the vocabulary does not hold (special tokens) decode to nothing.
  virtual std::string decode(std::span<const std::int64_t> ids) const = 0;
  // Sequence pairs: the id a decoder's input starts with (<s>) and the one that ends a target
  // (</s>); -1 where there are none.
  virtual std::int64_t start_id() const { return -1; }
  virtual std::int64_t end_id() const { return -1; }
};

}  // namespace dtnn
