// The text dataset's tokenizers: bytes (256 ids, any file) and characters (the distinct Unicode
// code points of the corpus, sorted, over UTF-8 text).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "dtnn/tokenizer.hpp"

namespace dtnn::datasets {

class ByteTokenizer final : public Tokenizer {
 public:
  std::int64_t size() const override { return 256; }
  std::vector<std::int64_t> encode(std::string_view text) const override;
  std::string decode(std::span<const std::int64_t> ids) const override;
};

// Code points of UTF-8 text; an Error names `where`, the line and the byte of a malformed
// sequence.
std::vector<char32_t> decode_utf8(std::string_view text, const std::string& where);
void append_utf8(std::string& out, char32_t c);

class CharacterTokenizer final : public Tokenizer {
 public:
  explicit CharacterTokenizer(std::vector<char32_t> alphabet);  // sorted, distinct
  std::int64_t size() const override { return static_cast<std::int64_t>(alphabet_.size()); }
  std::vector<std::int64_t> encode(std::string_view text) const override;
  std::string decode(std::span<const std::int64_t> ids) const override;
  std::int64_t id(char32_t c) const { return ids_.at(c); }

 private:
  std::vector<char32_t> alphabet_;
  std::unordered_map<char32_t, std::int64_t> ids_;
};

}  // namespace dtnn::datasets
