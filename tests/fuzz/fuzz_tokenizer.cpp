// The word-piece tokenizer (plugins/datasets/common/text_tokenizers.hpp): the input's bytes up to
// the first NUL are a vocabulary file, the rest a text to encode. A vocabulary is read or refused
// with a dtnn::Error; a text, valid UTF-8 or not, encodes to ids of the vocabulary, in time
// linear in its length (libFuzzer's -timeout catches a slow input), and decodes back without
// failing.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "text_tokenizers.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input = dtnn::fuzz::text(data, size);
  const std::size_t nul = input.find('\0');
  const std::string vocabulary = input.substr(0, nul);
  const std::string text = nul == std::string::npos ? "" : input.substr(nul + 1);
  dtnn::fuzz::expect_clear_errors([&] {
    const dtnn::datasets::WordPieceTokenizer tokenizer(vocabulary, "fuzz_vocab.txt");
    const std::vector<std::int64_t> ids = tokenizer.encode(text);
    for (const std::int64_t id : ids)
      if (id < 0 || id >= tokenizer.size()) std::abort();
    (void)tokenizer.decode(ids);
  });
  return 0;
}
