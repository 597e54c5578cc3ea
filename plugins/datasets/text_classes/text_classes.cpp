// text_classes: labelled texts for sequence classifiers (transformer_classifier).
//
// "path" is either
//   - a folder: each regular file matching "include" and not "exclude" is a class (named by the
//     file, classes in name order), its records separated by lines that hold only
//     "record_separator" (the fortunes package's "%"), or one record a line when that is ""; or
//   - a file of "label TAB text" lines (errors name the file and line of a line without a tab);
//     the classes are the distinct labels, sorted.
// A sample is a record's first "context" tokens, then padding: x = ids from 1 ("char", "byte" or
// "vocab" tokens as in the text dataset; 0 is <pad>, for an embedding's "padding_id": 0), y = the
// class, one-hot. Empty records are left out. The records are shuffled once (by "seed": files list
// their classes one after another, and the trainer's validation share is the training split's
// tail), then every test_every-th one is the test split.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "dtnn/dataset.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/rng.hpp"
#include "one_hot.hpp"
#include "text_tokenizers.hpp"
#include "token_params.hpp"

namespace {

using namespace dtnn;
namespace fs = std::filesystem;

constexpr const char* kParameters = R"({"path": "", "include": "*", "exclude": "",
    "record_separator": "%", "tokens": "char", "vocabulary": "", "context": 128,
    "test_every": 10, "seed": 0})";

constexpr std::int64_t kPadding = 0;

struct Record {
  std::int64_t label;
  std::vector<std::int32_t> ids;
};

class TextClasses final : public Dataset {
 public:
  explicit TextClasses(const Params& p) : context_(p.get_int("context")) {
    if (context_ < 1) p.fail("context", "a positive number of tokens per sample");
    const std::int64_t test_every = datasets::test_every(p);
    const std::string tokens = datasets::token_kind(p);
    const fs::path path = p.get_string("path");
    if (path.empty()) p.fail("path", "a folder of one file per class, or a file of label TAB text");
    std::error_code ec;
    if (!fs::exists(path, ec))
      throw Error(p.key_path("path") + ": " + path.string() + ": no such file or folder");
    std::vector<std::pair<std::string, std::string>> texts;  // (class, record)
    if (fs::is_directory(path, ec))
      read_folder(p, path, tokens != "byte", texts);
    else
      read_labelled(path, tokens != "byte", texts);

    Rng(static_cast<std::uint64_t>(p.get_int("seed"))).shuffle(std::span(texts));
    std::vector<const std::string*> all;
    for (const auto& [label, text] : texts) {
      classes_.emplace(label, 0);
      all.push_back(&text);
    }
    std::int64_t id = 0;
    for (auto& [name, number] : classes_) number = id++;
    tokenizer_ = std::make_unique<datasets::WithSpecials>(
        datasets::make_tokenizer(tokens, all, p.get_string("vocabulary")), 1);
    std::int64_t kept = 0;
    for (const auto& [label, text] : texts) {
      Record r{classes_.at(label), {}};
      for (std::int64_t t : tokenizer_->encode(text)) {
        if (static_cast<std::int64_t>(r.ids.size()) == context_) break;
        r.ids.push_back(static_cast<std::int32_t>(t));
      }
      if (r.ids.empty()) continue;
      (datasets::is_test(kept, test_every) ? test_ : train_).push_back(r);
      ++kept;
    }
    if (classes_.size() < 2 || train_.empty())
      throw Error(p.key_path("path") + ": " + path.string() + " gives " +
                  std::to_string(classes_.size()) + " classes and " +
                  std::to_string(train_.size()) +
                  " training records: expected at least 2 classes with records");
  }

  Shape sample_shape(Layout) const override { return Shape{context_}; }
  std::int64_t num_classes() const override { return static_cast<std::int64_t>(classes_.size()); }
  std::int64_t vocabulary_size() const override { return tokenizer_->size(); }
  const Tokenizer* tokenizer() const override { return tokenizer_.get(); }
  std::int64_t size(Split s) const override {
    return static_cast<std::int64_t>((s == Split::train ? train_ : test_).size());
  }

  void read(Split s, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    const std::vector<Record>& records = s == Split::train ? train_ : test_;
    for (std::int64_t index : indices)  // here, not in the parallel loop: nothing throws there
      DTNN_CHECK(index >= 0 && index < static_cast<std::int64_t>(records.size()),
                 "text_classes: sample index out of range");
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      T* xp = x.data<T>();
      parallel_for(static_cast<std::int64_t>(indices.size()), 16, [&](std::int64_t i) {
        const Record& r = records[static_cast<std::size_t>(indices[static_cast<std::size_t>(i)])];
        T* xr = xp + i * context_;
        const auto length = static_cast<std::int64_t>(r.ids.size());
        for (std::int64_t t = 0; t < context_; ++t) xr[t] = T(t < length ? r.ids[t] : kPadding);
        datasets::write_one_hot<T>(y, i, r.label);
      });
    });
  }

 private:
  static void read_folder(const Params& p, const fs::path& folder, bool utf8,
                          std::vector<std::pair<std::string, std::string>>& out) {
    const std::string separator = p.get_string("record_separator");
    const std::vector<fs::path> files = datasets::matching_files(p, folder);
    for (const fs::path& f : files) {
      const std::string label = f.filename().string();
      std::string record;
      auto flush = [&] {
        if (!record.empty()) out.emplace_back(label, record);
        record.clear();
      };
      for (const std::string& line : datasets::read_lines(f, utf8)) {
        if (separator.empty() || line == separator) {
          if (separator.empty()) record = line;
          flush();
          continue;
        }
        record += (record.empty() ? "" : "\n") + line;
      }
      flush();
    }
  }

  static void read_labelled(const fs::path& file, bool utf8,
                            std::vector<std::pair<std::string, std::string>>& out) {
    const std::vector<std::string> lines = datasets::read_lines(file, utf8);
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (lines[i].empty()) continue;
      const std::size_t tab = lines[i].find('\t');
      if (tab == std::string::npos || tab == 0)
        throw Error(file.string() + ": line " + std::to_string(i + 1) +
                    ": no label; expected label TAB text");
      out.emplace_back(lines[i].substr(0, tab), lines[i].substr(tab + 1));
    }
  }

  std::int64_t context_;
  std::map<std::string, std::int64_t> classes_;  // name -> class id, in name order
  std::unique_ptr<Tokenizer> tokenizer_;
  std::vector<Record> train_, test_;
};

Plugin* create(const Params& p, const PluginContext&) { return new TextClasses(p); }

}  // namespace

// It reads files: the conformance checks it on files that the harness writes (its fixtures).
// A file per class (fortunes' records), and label TAB text lines.
constexpr const char* kTraits = R"({"conformance": [], "fixtures": [{"kind": "files",
    "files": {"animals": "The cat sat.\n%\nA dog barked\nat night.\n%\nOwls.\n",
              "weather": "Rain again.\n%\nSun, \u00e9t\u00e9.\n%\n%\nFog.\n",
              "labelled.tsv": "pos\tgood day\nneg\tbad day\npos\tfine\n"},
    "params": [{"path": "$dir", "exclude": "*.tsv", "context": 6, "test_every": 3},
               {"path": "$dir/labelled.tsv", "tokens": "byte", "context": 4, "test_every": 0}]}]})";

DTNN_EXPORT_PLUGIN(.kind = "dataset", .name = "text_classes",
                   .description =
                       "labelled texts (a file per class, or label TAB text lines) "
                       "for sequence classifiers",
                   .parameters = kParameters, .traits = kTraits, .factory = create)
