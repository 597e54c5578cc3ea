#include "text_tokenizers.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "dtnn/error.hpp"
#include "read_file.hpp"

namespace dtnn::datasets {

std::vector<std::int64_t> ByteTokenizer::encode(std::string_view text) const {
  std::vector<std::int64_t> out;
  out.reserve(text.size());
  for (unsigned char c : text) out.push_back(c);
  return out;
}

std::string ByteTokenizer::decode(std::span<const std::int64_t> ids) const {
  std::string out;
  for (std::int64_t id : ids)
    if (id >= 0 && id < 256) out.push_back(static_cast<char>(id));
  return out;
}

namespace {

// One UTF-8 sequence: its code point and length in bytes; valid false when the bytes at i start no
// valid sequence (a stray or missing continuation byte, an overlong form, a surrogate, > U+10FFFF).
struct Utf8Char {
  char32_t c;
  std::size_t length;
  bool valid;
};

Utf8Char read_utf8(std::string_view text, std::size_t i) {
  const auto b = static_cast<unsigned char>(text[i]);
  const std::size_t length = b < 0x80           ? 1
                             : (b >> 5) == 0x6  ? 2
                             : (b >> 4) == 0xE  ? 3
                             : (b >> 3) == 0x1E ? 4
                                                : 0;
  if (length == 0 || i + length > text.size()) return {b, 1, false};
  char32_t c = length == 1 ? b : length == 2 ? (b & 0x1F) : length == 3 ? (b & 0x0F) : (b & 0x07);
  bool valid = true;
  for (std::size_t k = 1; k < length; ++k) {
    const auto next = static_cast<unsigned char>(text[i + k]);
    valid = valid && (next & 0xC0) == 0x80;
    c = (c << 6) | (next & 0x3F);
  }
  static constexpr char32_t kSmallest[5] = {0, 0, 0x80, 0x800, 0x10000};  // no overlong forms
  valid = valid && c >= kSmallest[length] && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF);
  return valid ? Utf8Char{c, length, true} : Utf8Char{b, 1, false};
}

}  // namespace

std::vector<char32_t> decode_utf8(std::string_view text, const std::string& where) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Char u = read_utf8(text, i);
    if (!u.valid) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(text[i]));
      throw Error(where + ": line " + std::to_string(line) + ", byte " + std::to_string(i) +
                  ": not UTF-8 (byte " + byte +
                  " starts no valid sequence); \"tokens\": \"byte\" reads any bytes");
    }
    if (u.c == U'\n') ++line;
    out.push_back(u.c);
    i += u.length;
  }
  return out;
}

void append_utf8(std::string& out, char32_t c) {
  if (c < 0x80) {
    out.push_back(static_cast<char>(c));
  } else if (c < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (c >> 6)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else if (c < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (c >> 12)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (c >> 18)));
    out.push_back(static_cast<char>(0x80 | ((c >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((c >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
}

CharacterTokenizer::CharacterTokenizer(std::vector<char32_t> alphabet)
    : alphabet_(std::move(alphabet)) {
  for (std::size_t i = 0; i < alphabet_.size(); ++i)
    ids_.emplace(alphabet_[i], static_cast<std::int64_t>(i));
}

std::vector<std::int64_t> CharacterTokenizer::encode(std::string_view text) const {
  std::vector<std::int64_t> out;
  for (char32_t c : decode_utf8(text, "text")) {
    const auto found = ids_.find(c);
    if (found == ids_.end()) {
      std::string shown;
      append_utf8(shown, c);
      char code[16];
      std::snprintf(code, sizeof code, "U+%04X", static_cast<unsigned>(c));
      throw Error("text: the character '" + shown + "' (" + code +
                  ") is not in the vocabulary of " + std::to_string(alphabet_.size()) +
                  " characters");
    }
    out.push_back(found->second);
  }
  return out;
}

std::string CharacterTokenizer::decode(std::span<const std::int64_t> ids) const {
  std::string out;
  for (std::int64_t id : ids)
    if (id >= 0 && id < size()) append_utf8(out, alphabet_[static_cast<std::size_t>(id)]);
  return out;
}

WordPieceTokenizer::WordPieceTokenizer(const std::filesystem::path& file) {
  const std::vector<std::uint8_t> bytes = read_file(file);
  read_vocabulary(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                  file.string());
}

WordPieceTokenizer::WordPieceTokenizer(std::string_view text, const std::string& where) {
  read_vocabulary(text, where);
}

void WordPieceTokenizer::read_vocabulary(std::string_view text, const std::string& file) {
  decode_utf8(text, file);  // an Error names the line and byte
  std::size_t line = 1;
  for (std::size_t start = 0; start < text.size(); ++line) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string token(text.substr(start, end - start));
    if (!token.empty() && token.back() == '\r') token.pop_back();
    start = end + 1;
    const std::string where = file + ": line " + std::to_string(line);
    if (token.empty()) throw Error(where + ": an empty line, expected one token per line");
    const auto [at, fresh] = ids_.emplace(token, static_cast<std::int64_t>(tokens_.size()));
    if (!fresh)
      throw Error(where + ": the token \"" + token + "\" again (first on line " +
                  std::to_string(at->second + 1) + "): a vocabulary holds each token once");
    max_token_bytes_ = std::max(max_token_bytes_, token.size());
    tokens_.push_back(std::move(token));
  }
  const auto unknown = ids_.find("[UNK]");
  if (unknown == ids_.end())
    throw Error(file + ": no \"[UNK]\" line, the token of words the vocabulary cannot spell");
  unknown_ = unknown->second;
}

namespace {

// BERT's basic tokenizer gives each CJK ideograph a word of its own (its ranges).
bool is_cjk(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B820 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

// The code point at text[i] of valid UTF-8 (the tokenizer's input was checked) and its length; a
// byte that starts no valid sequence stands for itself.
char32_t code_point_at(std::string_view text, std::size_t i, std::size_t& length) {
  const Utf8Char u = read_utf8(text, i);
  length = u.length;
  return u.c;
}

}  // namespace

// Linear in the text: a piece is looked for at most max_token_bytes_ long, and a word of more than
// kMaxWordCharacters is "[UNK]" without a search (BERT's max_input_chars_per_word).
std::vector<std::int64_t> WordPieceTokenizer::encode(std::string_view text) const {
  std::vector<std::int64_t> out;
  std::vector<std::int64_t> pieces;
  std::string piece;
  auto word_pieces = [&](std::string_view word, std::size_t characters) {
    if (characters > kMaxWordCharacters) {
      out.push_back(unknown_);
      return;
    }
    pieces.clear();
    for (std::size_t start = 0; start < word.size();) {
      std::int64_t found = -1;
      const std::size_t prefix = start > 0 ? 2 : 0;  // "##"
      const std::size_t longest = max_token_bytes_ > prefix ? max_token_bytes_ - prefix : 0;
      std::size_t end = std::min(word.size(), start + longest);
      for (; end > start; --end) {
        piece.assign(start > 0 ? "##" : "");
        piece.append(word.substr(start, end - start));
        if (const auto it = ids_.find(piece); it != ids_.end()) {
          found = it->second;
          break;
        }
      }
      if (found < 0) {
        out.push_back(unknown_);
        return;
      }
      pieces.push_back(found);
      start = end;
    }
    out.insert(out.end(), pieces.begin(), pieces.end());
  };
  std::size_t word = 0, characters = 0;
  auto flush = [&](std::size_t end) {
    if (end > word) word_pieces(text.substr(word, end - word), characters);
    characters = 0;
  };
  for (std::size_t i = 0; i < text.size();) {
    std::size_t length = 1;
    const char32_t c = code_point_at(text, i, length);
    const bool space = c < 0x80 && std::isspace(static_cast<unsigned char>(c));
    const bool alone = (c < 0x80 && std::ispunct(static_cast<unsigned char>(c))) || is_cjk(c);
    if (space || alone) {
      flush(i);
      if (alone) word_pieces(text.substr(i, length), 1);
      word = i + length;
    } else {
      ++characters;
    }
    i += length;
  }
  flush(text.size());
  return out;
}

std::string WordPieceTokenizer::decode(std::span<const std::int64_t> ids) const {
  std::string out;
  for (std::int64_t id : ids) {
    if (id < 0 || id >= size()) continue;
    const std::string& token = tokens_[static_cast<std::size_t>(id)];
    if (token.rfind("##", 0) == 0)
      out += token.substr(2);
    else
      out += (out.empty() ? "" : " ") + token;
  }
  return out;
}

std::vector<std::int64_t> WithSpecials::encode(std::string_view text) const {
  std::vector<std::int64_t> ids = base_->encode(text);
  for (std::int64_t& id : ids) id += specials_;
  return ids;
}

std::string WithSpecials::decode(std::span<const std::int64_t> ids) const {
  std::vector<std::int64_t> base;
  for (std::int64_t id : ids)
    if (id >= specials_) base.push_back(id - specials_);
  return base_->decode(base);
}

std::vector<std::string> read_lines(const std::filesystem::path& file, bool utf8) {
  const std::vector<std::uint8_t> bytes = read_file(file);
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (utf8) decode_utf8(text, file.string());
  std::vector<std::string> lines;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

std::unique_ptr<Tokenizer> make_tokenizer(const std::string& tokens,
                                          const std::vector<const std::string*>& texts,
                                          const std::string& vocabulary) {
  if (tokens == "byte") return std::make_unique<ByteTokenizer>();
  if (tokens == "vocab") return std::make_unique<WordPieceTokenizer>(vocabulary);
  std::vector<char32_t> alphabet;
  for (const std::string* text : texts)
    for (char32_t c : decode_utf8(*text, "text")) alphabet.push_back(c);
  std::sort(alphabet.begin(), alphabet.end());
  alphabet.erase(std::unique(alphabet.begin(), alphabet.end()), alphabet.end());
  return std::make_unique<CharacterTokenizer>(std::move(alphabet));
}

}  // namespace dtnn::datasets
