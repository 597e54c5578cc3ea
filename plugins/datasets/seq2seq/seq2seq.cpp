// seq2seq: pairs of token sequences for encoder-decoder models (an encoder_decoder layer).
//
// A sample is x = [source ids (S) | decoder input ids (T)] and y = the target's ids (T):
//   source:         the source's tokens, then <pad>
//   decoder input:  <s>, the target's tokens, then <pad>
//   y:              the target's tokens, </s>, then kIgnoredLabel
// so that position t of the decoder predicts target token t from the ones before it (teacher
// forcing). Ids 0, 1 and 2 are <pad>, <s> and </s>; the tokens follow from 3. An embedding with
// "padding_id": 0 masks the padding (dtnn/sequence_context.hpp).
//
// "task" picks the pairs:
//   "copy", "reverse", "sort":  synthetic, for tests: sources of min_length..max_length symbols
//       drawn uniformly from "symbols", the target the source itself, reversed or sorted.
//       Sample i of a split is a pure function of (seed, split, i). S = max_length, T = S + 1.
//       Its tokenizer writes symbols as numbers ("3 1 4").
//   "pairs":  sentence pairs from text: "path", one pair a line, source "separator" target (a tab
//       by default; PyDTNN 3.x's iwslt: "<translation>"); or "source" and "target", two files of
//       as many lines (the IWSLT and fairseq layout: train.de, train.en), which a folder "path"
//       with "lang" and "lang2" names: <path>/train.<lang> and <path>/train.<lang2>. (3.x picks
//       a spaCy model by language; here the tokens do not depend on it.) Tokens: "char" (the
//       characters of both sides, UTF-8), "byte", or "vocab" (word pieces of the "vocabulary" file,
//       shared by both sides). S = "source_length", T = "target_length"; a pair longer than those
//       is left out (an error when none is left); every test_every-th pair kept is the test split.
//       Errors name the file and the line: a line with no separator or two, files of different
//       lengths, malformed UTF-8.
// Also by PyDTNN 3.x's name "iwslt" (task "pairs", separator "<translation>").
#include <algorithm>
#include <memory>
#include <sstream>
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

constexpr const char* kParameters = R"({"task": "reverse", "symbols": 10, "min_length": 1,
    "max_length": 10, "train_samples": 10000, "test_samples": 1000,
    "path": "", "source": "", "target": "", "separator": "\t", "lang": "", "lang2": "",
    "tokens": "char", "vocabulary": "",
    "source_length": 64, "target_length": 64, "test_every": 10, "seed": 0})";

constexpr std::int32_t kPad = 0, kStart = 1, kEnd = 2, kFirstToken = 3;

using Ids = std::vector<std::int32_t>;

// The synthetic tasks' symbols as numbers: "3 1 4" is symbols 3, 1 and 4 (ids 0 to symbols - 1,
// before the special ids are added), so that dtnn generate can take and print them.
class SymbolTokenizer final : public Tokenizer {
 public:
  explicit SymbolTokenizer(std::int64_t symbols) : symbols_(symbols) {}
  std::int64_t size() const override { return symbols_; }
  std::vector<std::int64_t> encode(std::string_view text) const override {
    std::vector<std::int64_t> ids;
    std::istringstream in{std::string(text)};
    for (std::string word; in >> word;) {
      std::size_t used = 0;
      long long v = -1;
      try {
        v = std::stoll(word, &used);
      } catch (const std::exception&) {
      }
      if (used != word.size() || v < 0 || v >= symbols_)
        throw Error("seq2seq: '" + word + "' is not a symbol: expected numbers 0 to " +
                    std::to_string(symbols_ - 1) + " separated by spaces");
      ids.push_back(v);
    }
    return ids;
  }
  std::string decode(std::span<const std::int64_t> ids) const override {
    std::string out;
    for (std::int64_t id : ids)
      if (id >= 0 && id < symbols_) out += (out.empty() ? "" : " ") + std::to_string(id);
    return out;
  }

 private:
  std::int64_t symbols_;
};
struct Pair {
  Ids source, target;
};

class Seq2seq final : public Dataset {
 public:
  explicit Seq2seq(const Params& p)
      : task_(p.get_string("task")), seed_(static_cast<std::uint64_t>(p.get_int("seed"))) {
    if (task_ == "pairs")
      read_pairs(p);
    else if (task_ == "copy" || task_ == "reverse" || task_ == "sort")
      synthetic(p);
    else
      p.fail("task", "\"copy\", \"reverse\", \"sort\" (synthetic) or \"pairs\" (from files)");
  }

  Shape sample_shape(Layout) const override { return Shape{source_ + target_}; }
  bool class_id_labels() const override { return true; }
  Shape label_shape() const override { return Shape{target_}; }
  std::int64_t num_classes() const override { return vocabulary_; }
  std::int64_t vocabulary_size() const override { return vocabulary_; }
  std::int64_t source_length() const override { return source_; }
  const Tokenizer* tokenizer() const override { return tokenizer_.get(); }
  std::int64_t size(Split s) const override {
    if (!task_is_pairs()) return s == Split::train ? train_samples_ : test_samples_;
    return static_cast<std::int64_t>((s == Split::train ? train_ : test_).size());
  }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    for (std::int64_t index : indices)  // here, not in the parallel loop: nothing throws there
      DTNN_CHECK(index >= 0 && index < size(s), "seq2seq: sample index out of range");
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      T *xp = x.data<T>(), *yp = y.data<T>();
      parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
        const std::int64_t index = indices[static_cast<std::size_t>(i)];
        T* x_row = xp + i * (source_ + target_);
        T* y_row = yp + i * target_;
        if (task_is_pairs())  // the stored pair itself, not a copy
          write(pairs_of(s)[static_cast<std::size_t>(index)], x_row, y_row);
        else
          write(synthetic_pair(s, index), x_row, y_row);
      });
    });
  }

 private:
  bool task_is_pairs() const { return task_ == "pairs"; }
  const std::vector<Pair>& pairs_of(Split s) const { return s == Split::train ? train_ : test_; }

  template <class T>
  void write(const Pair& pair, T* x, T* y) const {
    const auto source = static_cast<std::int64_t>(pair.source.size());
    const auto target = static_cast<std::int64_t>(pair.target.size());
    for (std::int64_t t = 0; t < source_; ++t) x[t] = T(t < source ? pair.source[t] : kPad);
    T* decoder = x + source_;
    for (std::int64_t t = 0; t < target_; ++t) {
      decoder[t] = T(t == 0 ? kStart : t <= target ? pair.target[t - 1] : kPad);
      y[t] = T(t < target ? pair.target[t] : t == target ? kEnd : kIgnoredLabel);
    }
  }

  void synthetic(const Params& p) {
    symbols_ = p.get_int("symbols");
    min_length_ = p.get_int("min_length");
    source_ = p.get_int("max_length");
    train_samples_ = p.get_int("train_samples");
    test_samples_ = p.get_int("test_samples");
    // Token ids travel in float32 tensors: exact up to 2^24.
    if (symbols_ < 1 || symbols_ > (1 << 24) - kFirstToken)
      p.fail("symbols", "a number of symbols from 1 to " + std::to_string((1 << 24) - kFirstToken) +
                            " (ids travel as float32, exact up to 2^24)");
    if (min_length_ < 1) p.fail("min_length", "a positive length");
    if (source_ < min_length_) p.fail("max_length", "a length >= min_length");
    if (train_samples_ < 1) p.fail("train_samples", "a positive number of samples");
    if (test_samples_ < 0) p.fail("test_samples", "a number of samples >= 0");
    target_ = source_ + 1;
    tokenizer_ = std::make_unique<datasets::WithSpecials>(
        std::make_unique<SymbolTokenizer>(symbols_), kFirstToken, kStart, kEnd);
    vocabulary_ = tokenizer_->size();
  }

  Pair synthetic_pair(Split s, std::int64_t index) const {
    Rng rng(
        Rng::derive(seed_ * 2 + static_cast<std::uint64_t>(s), static_cast<std::uint64_t>(index)));
    const auto span = static_cast<std::uint64_t>(source_ - min_length_ + 1);
    const std::int64_t length = min_length_ + static_cast<std::int64_t>(rng.below(span));
    Pair pair;
    for (std::int64_t t = 0; t < length; ++t)
      pair.source.push_back(
          kFirstToken + static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(symbols_))));
    pair.target = pair.source;
    if (task_ == "reverse") std::reverse(pair.target.begin(), pair.target.end());
    if (task_ == "sort") std::sort(pair.target.begin(), pair.target.end());
    return pair;
  }

  void read_pairs(const Params& p) {
    source_ = p.get_int("source_length");
    target_ = p.get_int("target_length");
    if (source_ < 1) p.fail("source_length", "a positive number of tokens");
    if (target_ < 2) p.fail("target_length", "at least 2 tokens (the target and </s>)");
    const std::int64_t test_every = datasets::test_every(p);
    const std::string tokens = datasets::token_kind(p);
    const std::vector<std::pair<std::string, std::string>> text = read_text(p, tokens != "byte");
    std::vector<const std::string*> sides;
    for (const auto& [s, t] : text) sides.insert(sides.end(), {&s, &t});
    tokenizer_ = std::make_unique<datasets::WithSpecials>(
        datasets::make_tokenizer(tokens, sides, p.get_string("vocabulary")), kFirstToken, kStart,
        kEnd);
    vocabulary_ = tokenizer_->size();

    std::int64_t kept = 0;
    for (const auto& [s, t] : text) {
      Pair pair{ids_of(s), ids_of(t)};
      if (static_cast<std::int64_t>(pair.source.size()) > source_ ||
          static_cast<std::int64_t>(pair.target.size()) + 1 > target_) {
        ++left_out_;
        continue;
      }
      (datasets::is_test(kept, test_every) ? test_ : train_).push_back(std::move(pair));
      ++kept;
    }
    if (train_.empty())
      throw Error(p.key_path(p.get_string("path").empty() ? "source" : "path") + ": " +
                  std::to_string(text.size()) + " pairs, " + std::to_string(left_out_) +
                  " longer than source_length " + std::to_string(source_) + " or target_length " +
                  std::to_string(target_) + " - 1: no training pair left");
  }

  Ids ids_of(const std::string& text) const {
    Ids ids;
    for (std::int64_t id : tokenizer_->encode(text)) ids.push_back(static_cast<std::int32_t>(id));
    return ids;
  }

  // The (source, target) texts: a file of separated pairs, or two files of parallel lines.
  static std::vector<std::pair<std::string, std::string>> read_text(const Params& p, bool utf8) {
    std::vector<std::pair<std::string, std::string>> out;
    std::string path = p.get_string("path"), source = p.get_string("source"),
                target = p.get_string("target");
    const std::string lang = p.get_string("lang"), lang2 = p.get_string("lang2");
    if (!path.empty() && (!source.empty() || !target.empty()))
      p.fail("path",
             "either \"path\" (a file of pairs, or a folder with \"lang\" and "
             "\"lang2\") or \"source\" and \"target\"");
    std::error_code ec;
    if (!path.empty() && fs::is_directory(path, ec)) {
      if (lang.empty() || lang2.empty())
        p.fail(lang.empty() ? "lang" : "lang2",
               "the source and target languages of the folder \"path\" (train.<lang> and "
               "train.<lang2> there; PyDTNN's --dataset-lang and --dataset-lang2)");
      source = (fs::path(path) / ("train." + lang)).string();
      target = (fs::path(path) / ("train." + lang2)).string();
      path.clear();
    }
    if (!path.empty()) {
      const std::string separator = p.get_string("separator");
      if (separator.empty()) p.fail("separator", "the text between a pair's source and target");
      const bool tab = separator == "\t";
      const std::string named = tab ? "tab" : "'" + separator + "'",
                        pattern = "source " + (tab ? "TAB" : named) + " target";
      const std::vector<std::string> lines = datasets::read_lines(path, utf8);
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (lines[i].empty()) continue;
        const std::size_t at = lines[i].find(separator);
        const std::string where = path + ": line " + std::to_string(i + 1);
        if (at == std::string::npos) throw Error(where + ": no " + named + "; expected " + pattern);
        if (lines[i].find(separator, at + separator.size()) != std::string::npos)
          throw Error(where + ": more than one " + named + "; expected " + pattern);
        out.emplace_back(lines[i].substr(0, at), lines[i].substr(at + separator.size()));
      }
      return out;
    }
    if (source.empty() || target.empty())
      p.fail("path",
             "a tab-separated pair file, or \"source\" and \"target\" files of parallel "
             "lines");
    const std::vector<std::string> s = datasets::read_lines(source, utf8),
                                   t = datasets::read_lines(target, utf8);
    if (s.size() != t.size())
      throw Error(source + " has " + std::to_string(s.size()) + " lines but " + target + " has " +
                  std::to_string(t.size()) + ": expected one target line per source line");
    for (std::size_t i = 0; i < s.size(); ++i)
      if (!s[i].empty() || !t[i].empty()) out.emplace_back(s[i], t[i]);
    return out;
  }

  std::string task_;
  std::uint64_t seed_;
  std::int64_t source_ = 0, target_ = 0, vocabulary_ = 0;
  std::unique_ptr<Tokenizer> tokenizer_;
  // Synthetic tasks.
  std::int64_t symbols_ = 0, min_length_ = 0, train_samples_ = 0, test_samples_ = 0;
  // Pairs.
  std::vector<Pair> train_, test_;
  std::int64_t left_out_ = 0;
};

Plugin* create(const Params& p, const PluginContext&) { return new Seq2seq(p); }

}  // namespace

// Conformance: a synthetic task, and sentence pairs from a file the harness writes.
DTNN_EXPORT_PLUGIN(.kind = "dataset", .name = "seq2seq",
                   .description =
                       "sequence pairs for encoder-decoders: synthetic copy, reverse "
                       "and sort, or sentence-pair files",
                   .parameters = kParameters,
                   .traits = R"({"conformance": [{"params": {"task": "reverse", "max_length": 5,
                       "train_samples": 20, "test_samples": 4}}], "aliases": ["iwslt"],
                       "fixtures": [{"kind": "files", "files": {
                         "pairs.tsv": "one two\tuno dos\nthree\ttres\nfour five\tcuatro\n"},
                       "params": {"task": "pairs", "path": "$dir/pairs.tsv", "source_length": 9,
                                  "target_length": 8, "test_every": 2}}],
                       "alias_defaults": {"iwslt": {"task": "pairs",
                                                    "separator": "<translation>"}}})",
                   .factory = create)
