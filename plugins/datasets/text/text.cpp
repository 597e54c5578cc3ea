// text: plain-text files as token sequences, for language models.
//
// "path" is a file or a folder; a folder gives its regular files (symbolic links skipped: the
// fortunes package links each file under a second name) whose names match "include" and not
// "exclude" (shell patterns), in name order, read whole (gzip'd ones decompressed). Tokens:
//   "char":  the distinct Unicode characters of the files, sorted (UTF-8 required; a malformed
//            byte is an error naming the file, the line and the byte);
//   "byte":  the 256 byte values, any file;
//   "vocab": the word pieces of the vocabulary file "vocabulary" (BERT's vocab.txt layout,
//            text_tokenizers.hpp).
// The token stream is cut into windows of "context" tokens (+1 for the next-token target), in
// order; every "test_every"-th window is the test split, the others the training split (the
// trainer holds its validation share out of these). Objectives:
//   "causal":  x = tokens [s, s + T),  y = tokens [s + 1, s + T + 1)  (next-token prediction);
//   "masked":  BERT's: each position is chosen with probability mask_fraction; a chosen one is
//              replaced by the mask token (80%), a random token (10%) or kept (10%), and only
//              chosen positions have a target (y = the original token, elsewhere kIgnoredLabel).
//              The choice is a pure function of (seed, split, window). The mask token is the
//              vocabulary's last id.
// Also by PyDTNN 3.x's name "mask_lang" (objective "masked"; 3.x masks one word of each line,
// as spaCy's model for "lang" splits it: here any text, its tokens whatever the language, "lang"
// only recorded).
#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dtnn/dataset.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/rng.hpp"
#include "read_file.hpp"
#include "text_tokenizers.hpp"
#include "token_params.hpp"

namespace {

using namespace dtnn;
namespace fs = std::filesystem;

constexpr const char* kParameters = R"({"path": "", "include": "*", "exclude": "",
    "tokens": "char", "vocabulary": "", "context": 128, "objective": "causal", "mask_fraction": 0.15,
    "test_every": 10, "seed": 0, "lang": ""})";

class Text final : public Dataset {
 public:
  explicit Text(const Params& p)
      : context_(p.get_int("context")),
        masked_(p.get_string("objective") == "masked"),
        mask_fraction_(p.get_double("mask_fraction")),
        seed_(static_cast<std::uint64_t>(p.get_int("seed"))) {
    if (context_ < 1) p.fail("context", "a positive number of tokens per sample");
    if (!masked_ && p.get_string("objective") != "causal")
      p.fail("objective", "\"causal\" or \"masked\"");
    if (!(mask_fraction_ > 0 && mask_fraction_ < 1)) p.fail("mask_fraction", "a number in (0, 1)");
    const std::int64_t test_every = datasets::test_every(p);
    const std::string tokens = datasets::token_kind(p);
    const std::vector<fs::path> files = list_files(p);
    if (tokens == "vocab")
      tokenize_pieces(files, p.get_string("vocabulary"));
    else
      tokenize(files, tokens == "char");
    classes_ = tokenizer_->size() + (masked_ ? 1 : 0);
    const std::int64_t windows =
        (static_cast<std::int64_t>(stream_.size()) - (masked_ ? 0 : 1)) / context_;
    for (std::int64_t w = 0; w < windows; ++w)
      (datasets::is_test(w, test_every) ? test_ : train_).push_back(w);
    if (train_.empty())
      throw Error(p.key_path("path") + ": " + std::to_string(stream_.size()) +
                  " tokens make no training window of " + std::to_string(context_ + 1) +
                  " tokens (lower \"context\" or give more text)");
  }

  Shape sample_shape(Layout) const override { return Shape{context_}; }
  bool class_id_labels() const override { return true; }
  Shape label_shape() const override { return Shape{context_}; }
  std::int64_t num_classes() const override { return classes_; }
  std::int64_t vocabulary_size() const override { return classes_; }
  const Tokenizer* tokenizer() const override { return tokenizer_.get(); }
  std::int64_t size(Split s) const override {
    return static_cast<std::int64_t>((s == Split::train ? train_ : test_).size());
  }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    const std::vector<std::int64_t>& windows = s == Split::train ? train_ : test_;
    for (std::int64_t index : indices)  // here, not in the parallel loop: nothing throws there
      DTNN_CHECK(index >= 0 && index < static_cast<std::int64_t>(windows.size()),
                 "text: sample index out of range");
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      T *xp = x.data<T>(), *yp = y.data<T>();
      parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
        const std::int64_t window =
            windows[static_cast<std::size_t>(indices[static_cast<std::size_t>(i)])];
        const std::int32_t* tokens = stream_.data() + window * context_;
        T* xr = xp + i * context_;
        T* yr = yp + i * context_;
        if (!masked_) {
          for (std::int64_t t = 0; t < context_; ++t) {
            xr[t] = T(tokens[t]);
            yr[t] = T(tokens[t + 1]);
          }
          return;
        }
        Rng rng(Rng::derive(seed_ * 2 + static_cast<std::uint64_t>(s),
                            static_cast<std::uint64_t>(window)));
        const std::int64_t mask = classes_ - 1, vocabulary = tokenizer_->size();
        for (std::int64_t t = 0; t < context_; ++t) {
          xr[t] = T(tokens[t]);
          yr[t] = T(kIgnoredLabel);
          if (rng.uniform() >= mask_fraction_) continue;
          yr[t] = T(tokens[t]);
          const double how = rng.uniform();
          if (how < 0.8)
            xr[t] = T(mask);
          else if (how < 0.9)
            xr[t] = T(static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(vocabulary))));
        }
      });
    });
  }

 private:
  static std::vector<fs::path> list_files(const Params& p) {
    const fs::path path = p.get_string("path");
    if (path.empty()) p.fail("path", "a text file or a folder of text files");
    std::error_code ec;
    if (!fs::exists(path, ec))
      throw Error(p.key_path("path") + ": " + path.string() + ": no such file or folder");
    if (!fs::is_directory(path, ec)) return {path};
    const std::vector<fs::path> files = datasets::matching_files(p, path);
    if (files.empty())
      throw Error(
          p.key_path("path") + ": " + path.string() + " holds no regular file matching \"" +
          p.get_string("include") + "\"" +
          (p.get_string("exclude").empty() ? "" : " but not \"" + p.get_string("exclude") + "\""));
    return files;
  }

  void tokenize(const std::vector<fs::path>& files, bool characters) {
    if (!characters) {
      tokenizer_ = std::make_unique<datasets::ByteTokenizer>();
      for (const fs::path& f : files)
        for (std::uint8_t b : datasets::read_file(f)) stream_.push_back(b);
      return;
    }
    std::vector<std::vector<char32_t>> decoded;
    std::set<char32_t> alphabet;
    for (const fs::path& f : files) {
      const std::vector<std::uint8_t> bytes = datasets::read_file(f);
      decoded.push_back(datasets::decode_utf8(
          std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), f.string()));
      alphabet.insert(decoded.back().begin(), decoded.back().end());
    }
    auto chars = std::make_unique<datasets::CharacterTokenizer>(
        std::vector<char32_t>(alphabet.begin(), alphabet.end()));
    for (const auto& text : decoded)
      for (char32_t c : text) stream_.push_back(static_cast<std::int32_t>(chars->id(c)));
    tokenizer_ = std::move(chars);
  }

  void tokenize_pieces(const std::vector<fs::path>& files, const fs::path& vocabulary) {
    auto pieces = std::make_unique<datasets::WordPieceTokenizer>(vocabulary);
    for (const fs::path& f : files) {
      const std::vector<std::uint8_t> bytes = datasets::read_file(f);
      const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
      datasets::decode_utf8(text, f.string());  // a malformed byte named by file and line
      for (std::int64_t id : pieces->encode(text)) stream_.push_back(static_cast<std::int32_t>(id));
    }
    tokenizer_ = std::move(pieces);
  }

  std::int64_t context_;
  bool masked_;
  double mask_fraction_;
  std::uint64_t seed_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::int64_t classes_ = 0;
  std::vector<std::int32_t> stream_;        // the corpus as token ids
  std::vector<std::int64_t> train_, test_;  // window numbers of each split
};

Plugin* create(const Params& p, const PluginContext&) { return new Text(p); }

}  // namespace

// It reads files: the conformance checks it on files that the harness writes (its fixtures): both
// tokenizers, both objectives, and a file outside the pattern that is not UTF-8.
DTNN_EXPORT_PLUGIN(.kind = "dataset", .name = "text",
                   .description =
                       "plain-text files as token windows (characters or bytes) for "
                       "causal or masked language models",
                   .parameters = kParameters,
                   .traits = R"({"conformance": [], "aliases": ["mask_lang"],
                       "alias_defaults": {"mask_lang": {"objective": "masked"}},
                       "fixtures": [{"kind": "files", "files": {
                         "a.txt": "The quick brown fox.\n%\nJumps over the lazy dog: \u00e9t\u00e9.\n",
                         "b.txt": "A second file, read after the first.\n",
                         "skip.dat": {"bytes": [255, 254, 32, 98, 105, 110, 97, 114, 121]}},
                       "params": [{"path": "$dir", "exclude": "*.dat", "context": 8},
                                  {"path": "$dir", "exclude": "*.dat", "context": 5,
                                   "objective": "masked", "test_every": 3},
                                  {"path": "$dir/skip.dat", "tokens": "byte", "context": 3,
                                   "test_every": 0}]}]})",
                   .factory = create)
