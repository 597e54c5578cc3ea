#include "text_tokenizers.hpp"

#include <cstdio>

#include "dtnn/error.hpp"

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

std::vector<char32_t> decode_utf8(std::string_view text, const std::string& where) {
  std::vector<char32_t> out;
  out.reserve(text.size());
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto b = static_cast<unsigned char>(text[i]);
    int length = b < 0x80           ? 1
                 : (b >> 5) == 0x6  ? 2
                 : (b >> 4) == 0xE  ? 3
                 : (b >> 3) == 0x1E ? 4
                                    : 0;
    char32_t c = length == 1 ? b : length == 2 ? (b & 0x1F) : length == 3 ? (b & 0x0F) : (b & 0x07);
    bool valid = length > 0 && i + static_cast<std::size_t>(length) <= text.size();
    for (int k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + static_cast<std::size_t>(k)]);
      valid = (next & 0xC0) == 0x80;
      c = (c << 6) | (next & 0x3F);
    }
    static constexpr char32_t kSmallest[5] = {0, 0, 0x80, 0x800, 0x10000};  // no overlong forms
    valid = valid && c >= kSmallest[length] && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF);
    if (!valid) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", b);
      throw Error(where + ": line " + std::to_string(line) + ", byte " + std::to_string(i) +
                  ": not UTF-8 (byte " + byte +
                  " starts no valid sequence); \"tokens\": \"byte\" reads any bytes");
    }
    if (c == U'\n') ++line;
    out.push_back(c);
    i += static_cast<std::size_t>(length);
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

}  // namespace dtnn::datasets
