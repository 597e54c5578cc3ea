// The text dataset: tokenizers, windows and splits, the masked objective, and its errors.
#include <doctest/doctest.h>

#include <fstream>
#include <set>

#include "dtnn/dataset.hpp"
#include "dtnn/tokenizer.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

std::filesystem::path write_text(const std::string& folder, const std::string& name,
                                 const std::string& text) {
  const auto dir = test::temp_dir(folder);
  std::ofstream(dir / name, std::ios::binary) << text;
  return dir / name;
}

std::shared_ptr<Dataset> text_dataset(const json& params) {
  return test::plugins().create_as<Dataset>("dataset", "text", Params(params, "exp.json: dataset"));
}

// Samples [0, n) of a split as ids: x and y, each [n, context].
std::pair<std::vector<float>, std::vector<float>> read_all(const Dataset& d, Split split) {
  const std::int64_t n = d.size(split), t = d.sample_shape(Layout::nhwc)[0];
  Tensor x = Tensor::empty(Shape{n, t}, DType::float32),
         y = Tensor::empty(Shape{n, t}, DType::float32);
  std::vector<std::int64_t> idx(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) idx[static_cast<std::size_t>(i)] = i;
  d.read(split, idx, x, y);
  return {std::vector<float>(x.data<float>(), x.data<float>() + x.numel()),
          std::vector<float>(y.data<float>(), y.data<float>() + y.numel())};
}

}  // namespace

TEST_CASE("text: characters are the corpus's sorted alphabet, and windows predict the next one") {
  const auto file = write_text("text_chars", "a.txt", "abcabcabcab\u00e9");  // 12 characters
  auto d = text_dataset({{"path", file.string()}, {"context", 3}, {"test_every", 2}});
  const Tokenizer& tok = *d->tokenizer();
  CHECK(tok.size() == 4);  // a b c é
  CHECK(d->num_classes() == 4);
  CHECK(d->vocabulary_size() == 4);
  CHECK(d->label_shape() == Shape{3});
  CHECK(d->class_id_labels());
  CHECK(tok.decode(tok.encode("cab\u00e9")) == "cab\u00e9");
  CHECK(test::error_of([&] {
          tok.encode("abd");
        }).find("'d' (U+0064) is not in the vocabulary of 4") != std::string::npos);
  // 12 tokens: (12 - 1) / 3 = 3 windows; every 2nd is the test split.
  CHECK(d->size(Split::train) == 2);
  CHECK(d->size(Split::test) == 1);
  const auto [x, y] = read_all(*d, Split::train);  // windows 0 and 2, both "abc" -> "bca"
  CHECK(x == std::vector<float>{0, 1, 2, 0, 1, 2});
  CHECK(y == std::vector<float>{1, 2, 0, 1, 2, 0});
  const auto [tx, ty] = read_all(*d, Split::test);  // window 1: "abc" -> "bca"
  CHECK(tx == std::vector<float>{0, 1, 2});
  CHECK(ty == std::vector<float>{1, 2, 0});
}

TEST_CASE("text: PyDTNN 3.x's name mask_lang is the masked objective") {
  const auto file = write_text("text_mask_lang", "a.txt", "the cat sat on the mat. ");
  const json params = {{"path", file.string()}, {"context", 8}, {"lang", "en"}};
  auto masked = test::plugins().create_as<Dataset>("dataset", "mask_lang",
                                                   Params(params, "exp.json: dataset"));
  auto causal = text_dataset(params);
  // Causal windows label every position; masked ones only those hidden (the others ignored).
  const auto [cx, cy] = read_all(*causal, Split::train);
  const auto [mx, my] = read_all(*masked, Split::train);
  CHECK(std::count(cy.begin(), cy.end(), float(kIgnoredLabel)) == 0);
  CHECK(std::count(my.begin(), my.end(), float(kIgnoredLabel)) > 0);
}

TEST_CASE("text: a context as long as the vocabulary still labels with class ids") {
  const auto file = write_text("text_square", "a.txt", "abcabcabcabcabc");  // 3 characters
  auto d = text_dataset({{"path", file.string()}, {"context", 3}});
  CHECK(d->label_shape() == Shape{d->num_classes()});  // the shapes alone would say one-hot
  CHECK(d->class_id_labels());
}

TEST_CASE("text: bytes read any file, a folder gives its matching regular files in name order") {
  const auto b = write_text("text_folder", "b.txt", "BB");
  write_text("text_folder", "a.txt", "AA");
  write_text("text_folder", "c.dat", "\xff\xff");
  std::filesystem::create_symlink(b, b.parent_path() / "link.txt");
  auto d = text_dataset({{"path", b.parent_path().string()},
                         {"exclude", "*.dat"},
                         {"tokens", "byte"},
                         {"context", 3},
                         {"test_every", 0}});
  CHECK(d->num_classes() == 256);
  const auto [x, y] = read_all(*d, Split::train);  // "AABB": the link is skipped, c.dat excluded
  CHECK(x == std::vector<float>{'A', 'A', 'B'});
  CHECK(y == std::vector<float>{'A', 'B', 'B'});
}

TEST_CASE(
    "text: the masked objective hides about mask_fraction of positions, and only they have "
    "targets") {
  std::string text;
  for (int i = 0; i < 400; ++i) text += "the quick brown fox jumps over the lazy dog. ";
  const auto file = write_text("text_masked", "a.txt", text);
  auto d = text_dataset({{"path", file.string()}, {"context", 50}, {"objective", "masked"}});
  const std::int64_t mask = d->num_classes() - 1;  // the last id
  CHECK(d->tokenizer()->size() == mask);
  const auto [x, y] = read_all(*d, Split::train);
  const std::string original = text;
  std::int64_t targets = 0, masked = 0, kept_or_random = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (y[i] == kIgnoredLabel) {
      CHECK(x[i] != float(mask));  // unchosen positions show their token
      continue;
    }
    ++targets;
    if (x[i] == float(mask))
      ++masked;
    else
      ++kept_or_random;
  }
  const double share = double(targets) / double(y.size());
  MESSAGE("targets " << share << " of positions, masked " << double(masked) / double(targets));
  CHECK(share > 0.13);
  CHECK(share < 0.17);
  CHECK(double(masked) / double(targets) > 0.75);
  CHECK(double(masked) / double(targets) < 0.85);
  // Deterministic: a second instance reads the same.
  auto again = text_dataset({{"path", file.string()}, {"context", 50}, {"objective", "masked"}});
  CHECK(read_all(*again, Split::train) == std::make_pair(x, y));
}

TEST_CASE("text: malformed input is an error naming the file, the line and the problem") {
  const auto bad = write_text("text_bad", "bad.txt", "line one\nline two \xC3\x28 here\n");
  CHECK(test::error_of([&] {
          text_dataset({{"path", bad.string()}});
        }) == bad.string() +
                  ": line 2, byte 18: not UTF-8 (byte 0xC3 starts no valid sequence); "
                  "\"tokens\": \"byte\" reads any bytes");
  const auto overlong = write_text("text_bad", "overlong.txt", "ok\xC0\xAF");
  CHECK(test::error_of([&] {
          text_dataset({{"path", overlong.string()}});
        }).find("line 1, byte 2: not UTF-8") != std::string::npos);
  const auto tiny = write_text("text_bad", "tiny.txt", "abc");
  CHECK(
      test::error_of([&] {
        text_dataset({{"path", tiny.string()}, {"context", 8}});
      }) ==
      "exp.json: dataset.path: 3 tokens make no training window of 9 tokens (lower \"context\" or "
      "give more text)");
  CHECK(test::error_of([&] {
          text_dataset({{"path", "/nonexistent/x"}});
        }) == "exp.json: dataset.path: /nonexistent/x: no such file or folder");
  CHECK(test::error_of([&] {
          text_dataset({{"path", tiny.parent_path().string()}, {"include", "*.md"}});
        }) == "exp.json: dataset.path: " + tiny.parent_path().string() +
                  " holds no regular file matching \"*.md\"");
  CHECK(test::error_of([&] {
          text_dataset({{"path", tiny.string()}, {"tokens", "bpe"}});
        }).find("dataset.tokens: expected \"char\", \"byte\" or \"vocab\"") != std::string::npos);
}

TEST_CASE("text: word pieces of a vocabulary file as the token stream") {
  const auto vocab = write_text("text_vocab", "vocab.txt", "[UNK]\nthe\ncat\n##s\nsat\n.\n");
  const auto corpus = write_text("text_vocab", "corpus.txt", "The cats sat.\nthe cat sat.\n");
  auto d = text_dataset({{"path", corpus.string()},
                         {"tokens", "vocab"},
                         {"vocabulary", vocab.string()},
                         {"context", 3},
                         {"test_every", 0}});
  CHECK(d->vocabulary_size() == 6);
  // "The" is not in the vocabulary (it is cased): [UNK] cat ##s sat . the cat sat .
  const auto [x, y] = read_all(*d, Split::train);
  CHECK(std::vector<float>(x.begin(), x.begin() + 6) == std::vector<float>{0, 2, 3, 4, 5, 1});
  CHECK(std::vector<float>(y.begin(), y.begin() + 6) == std::vector<float>{2, 3, 4, 5, 1, 2});
  CHECK(test::error_of([&] {
          text_dataset({{"path", corpus.string()}, {"tokens", "vocab"}});
        }).find("dataset.vocabulary: expected a vocabulary file") != std::string::npos);
}

TEST_CASE("text: word pieces split CJK ideographs, and a word over 100 characters is [UNK]") {
  // Ids: [UNK] 0, cat 1, 猫 2, 狗 3, a 4, ##a 5.
  const auto vocab =
      write_text("text_cjk", "vocab.txt", "[UNK]\ncat\n\xE7\x8C\xAB\n\xE7\x8B\x97\na\n##a\n");
  // A 200,000-letter word (the search was cubic in a word's length: this took hours), a
  // 100-letter one (a ##a ... ##a), then 50,000 ideographs in a row (BERT's basic tokenizer
  // makes each a word).
  std::string text = std::string(200000, 'a') + " " + std::string(100, 'a') + " cat ";
  for (int i = 0; i < 25000; ++i) text += "\xE7\x8C\xAB\xE7\x8B\x97";  // 猫狗
  const auto corpus = write_text("text_cjk", "corpus.txt", text + "\n");
  auto d = text_dataset({{"path", corpus.string()},
                         {"tokens", "vocab"},
                         {"vocabulary", vocab.string()},
                         {"context", 103},
                         {"test_every", 0}});
  const auto [x, y] = read_all(*d, Split::train);
  std::vector<float> expected{0, 4};  // [UNK] for the long word; a ##a x 99 for the 100-letter one
  expected.insert(expected.end(), 99, 5);
  expected.insert(expected.end(), {1, 2});  // cat 猫: the window's 103 tokens
  CHECK(std::vector<float>(x.begin(), x.begin() + 103) == expected);
  CHECK(y[102] == 3);  // and 狗 the next one
  CHECK(d->size(Split::train) > 0);
}

TEST_CASE("text_classes: a class per file, records between separator lines, padded ids") {
  const auto dir = test::temp_dir("text_classes");
  std::ofstream(dir / "b_weather") << "rain\n%\nsun\nand wind\n%\n";
  std::ofstream(dir / "a_animals") << "cat\n%\n%\ndog\n";
  auto make = [](const json& p) {
    return test::plugins().create_as<Dataset>("dataset", "text_classes",
                                              Params(p, "exp.json: dataset"));
  };
  auto d = make({{"path", dir.string()}, {"context", 5}, {"test_every", 0}});
  CHECK(d->num_classes() == 2);
  CHECK(d->size(Split::train) == 4);  // cat, dog, rain, "sun\nand wind"; the empty record left out
  CHECK(d->sample_shape(Layout::nhwc) == Shape{5});
  Tensor x = Tensor::empty(Shape{4, 5}, DType::float32),
         y = Tensor::empty(Shape{4, 2}, DType::float32);
  const std::int64_t all[] = {0, 1, 2, 3};
  d->read(Split::train, all, x, y);
  const Tokenizer& t = *d->tokenizer();
  // Each sample's text (the padding decodes to nothing) and class; the records come shuffled.
  std::set<std::pair<std::string, int>> samples;
  for (std::int64_t row = 0; row < 4; ++row) {
    std::vector<std::int64_t> ids;
    for (std::int64_t i = 0; i < 5; ++i) ids.push_back(std::int64_t(x.data<float>()[row * 5 + i]));
    samples.emplace(t.decode(ids), y.data<float>()[row * 2 + 1] == 1 ? 1 : 0);
    if (t.decode(ids) == "cat") CHECK(ids[3] == 0);  // padding after "cat"
  }
  // a_animals is class 0, b_weather class 1; records cut at 5 characters.
  const std::set<std::pair<std::string, int>> expected{
      {"cat", 0}, {"dog", 0}, {"rain", 1}, {"sun\na", 1}};
  CHECK(samples == expected);
  auto reordered = make({{"path", dir.string()}, {"context", 5}, {"test_every", 0}, {"seed", 1}});
  Tensor x2 = Tensor::empty(Shape{4, 5}, DType::float32);
  reordered->read(Split::train, all, x2, y);
  CHECK(std::vector<float>(x.data<float>(), x.data<float>() + 20) !=
        std::vector<float>(x2.data<float>(), x2.data<float>() + 20));  // another order

  const auto tsv = write_text("text_classes_tsv", "l.tsv", "pos\tgood\nneg\tbad\nnone\n");
  CHECK(test::error_of([&] {
          make({{"path", tsv.string()}});
        }) == tsv.string() + ": line 3: no label; expected label TAB text");
  const auto one = write_text("text_classes_one", "one.tsv", "pos\tgood\npos\tfine\n");
  CHECK(test::error_of([&] {
          make({{"path", one.string()}});
        }).find("gives 1 classes and") != std::string::npos);
}
