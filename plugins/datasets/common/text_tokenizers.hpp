// The token datasets' tokenizers: bytes (256 ids, any file), characters (the distinct Unicode
// code points of the corpus, sorted, over UTF-8 text), and word pieces from a vocabulary file.
#pragma once
#include <cstdint>
#include <filesystem>
#include <memory>
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

// BERT's word pieces over a vocabulary file (vocab.txt): one token per line, UTF-8, its line
// number less one its id. Text splits into words at whitespace, and around each ASCII punctuation
// mark and each CJK ideograph (words of their own, as BERT's basic tokenizer makes them); a word
// becomes the longest vocabulary token from its start, then the longest "##" token from where that
// ended, and so on; a word with no such split, or of more than kMaxWordCharacters characters, is
// "[UNK]" (which the file must hold). Encoding is linear in the text's length. Errors name the
// file and line: a duplicate token (and the line of its first), an empty line, bytes that are not
// UTF-8, no "[UNK]".
class WordPieceTokenizer final : public Tokenizer {
 public:
  explicit WordPieceTokenizer(const std::filesystem::path& file);
  // The vocabulary file's text; `where` names it in errors.
  WordPieceTokenizer(std::string_view text, const std::string& where);
  std::int64_t size() const override { return static_cast<std::int64_t>(tokens_.size()); }
  std::vector<std::int64_t> encode(std::string_view text) const override;
  // Tokens joined by spaces, a "##" piece onto the one before it.
  std::string decode(std::span<const std::int64_t> ids) const override;

 private:
  static constexpr std::size_t kMaxWordCharacters = 100;  // BERT's max_input_chars_per_word

  void read_vocabulary(std::string_view text, const std::string& where);

  std::vector<std::string> tokens_;
  std::unordered_map<std::string, std::int64_t> ids_;
  std::int64_t unknown_ = 0;
  std::size_t max_token_bytes_ = 0;  // no piece is looked for beyond this
};

// A tokenizer's ids moved up past `specials` ids of the dataset's own (padding, start, end),
// which decode to nothing; start and end name the start and end ids (-1: none).
class WithSpecials final : public Tokenizer {
 public:
  WithSpecials(std::unique_ptr<Tokenizer> base, std::int64_t specials, std::int64_t start = -1,
               std::int64_t end = -1)
      : base_(std::move(base)), specials_(specials), start_(start), end_(end) {}
  std::int64_t size() const override { return base_->size() + specials_; }
  std::vector<std::int64_t> encode(std::string_view text) const override;
  std::string decode(std::span<const std::int64_t> ids) const override;
  std::int64_t start_id() const override { return start_; }
  std::int64_t end_id() const override { return end_; }

 private:
  std::unique_ptr<Tokenizer> base_;
  std::int64_t specials_, start_, end_;
};

// The lines of a text file without their "\n" or "\r\n", UTF-8 checked (errors name the file,
// line and byte) unless bytes are wanted.
std::vector<std::string> read_lines(const std::filesystem::path& file, bool utf8);

// The tokenizer a token dataset's "tokens" names, for the texts it will encode: "byte", "char"
// (the distinct characters of texts, which are UTF-8) or "vocab" (word pieces of `vocabulary`).
std::unique_ptr<Tokenizer> make_tokenizer(const std::string& tokens,
                                          const std::vector<const std::string*>& texts,
                                          const std::string& vocabulary);

}  // namespace dtnn::datasets
