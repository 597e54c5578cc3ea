// Conformance by discovery: every layer, optimizer, metric and loss plugin the registry finds is
// checked by its kind's generic driver (dtnn/testing/plugin_conformance.hpp) at the cases its
// traits declare. A new plugin in the tree is checked with no new test code; `dtnn check-plugin`
// runs the same on a plugin file.
#include <doctest/doctest.h>

#include <fstream>

#include "dataset_fixtures.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/npz.hpp"
#include "dtnn/testing/plugin_conformance.hpp"
#include "test_support.hpp"

using namespace dtnn;
namespace fs = std::filesystem;

namespace {

void write_bytes(const fs::path& file, const std::vector<std::uint8_t>& bytes) {
  fs::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
}

NpyArray floats(std::vector<std::int64_t> shape, double scale) {
  NpyArray a;
  a.shape = std::move(shape);
  a.data.resize(static_cast<std::size_t>(a.numel()) * 4);
  auto* v = reinterpret_cast<float*>(a.data.data());
  for (std::int64_t i = 0; i < a.numel(); ++i) v[i] = float(scale * double(i % 7));
  return a;
}

// Class indices 0, 1, 2, 0, ... (as float32: what write_npz writes).
NpyArray labels(std::int64_t n) {
  NpyArray a;
  a.shape = {n};
  a.data.resize(static_cast<std::size_t>(n) * 4);
  for (std::int64_t i = 0; i < n; ++i) reinterpret_cast<float*>(a.data.data())[i] = float(i % 3);
  return a;
}

// The cases of the dataset plugins that read files, on files written here (their traits declare
// none of their own).
std::string file_cases(const std::string& name) {
  const fs::path dir = test::temp_dir("conformance_" + name);
  nlohmann::json params;
  if (name == "cifar10") {
    for (const auto& [file, bytes] : test::cifar_files()) write_bytes(dir / file, bytes);
    params = {{"path", dir.string()}};
  } else if (name == "cifar100") {
    for (const auto& [file, bytes] : test::cifar100_files()) write_bytes(dir / file, bytes);
    params = {{"path", dir.string()}};
  } else if (name == "cyclone" || name == "tsunamis") {  // CIFAR's layout: 2 records a file
    const std::size_t pixels = name == "cyclone" ? 5 * 40 * 40 : 80 * 80;
    auto records = [&](int seed) {
      std::vector<std::uint8_t> b;
      for (int r = 0; r < 2; ++r) {
        b.push_back(static_cast<std::uint8_t>((r + seed) % 2));
        for (std::size_t p = 0; p < pixels; ++p) b.push_back(static_cast<std::uint8_t>(p * seed));
      }
      return b;
    };
    for (int i = 1; i <= 5; ++i)
      write_bytes(dir / ("data_batch_" + std::to_string(i) + ".bin"), records(i));
    write_bytes(dir / "test_batch.bin", records(7));
    params = {{"path", dir.string()}};
  } else if (name == "npz") {
    write_npz(dir / "d.npz", {{"x_train", floats({5, 4, 3, 2}, 0.1)},
                              {"y_train", labels(5)},
                              {"x_test", floats({3, 4, 3, 2}, 0.2)},
                              {"y_test", labels(3)}});
    params = {{"path", (dir / "d.npz").string()}};
  } else if (name == "image_labels") {
    params = {{"path", test::make_labelled_images("conformance_" + name, 8, true).string()},
              {"size", 8},
              {"resize", 8}};
  } else if (name == "imagenet" || name == "folder") {
    params = {
        {"path", test::make_folder("conformance_" + name, 3).string()}, {"size", 8}, {"resize", 8}};
  } else if (name == "text") {  // both tokenizers, both objectives
    std::ofstream(dir / "a.txt")
        << "The quick brown fox.\n%\nJumps over the lazy dog: \u00e9t\u00e9.\n";
    std::ofstream(dir / "b.txt") << "A second file, read after the first.\n";
    std::ofstream(dir / "skip.dat") << "\xff\xfe binary";
    const std::string folder = dir.string();
    return nlohmann::json::array(
               {{{"params", {{"path", folder}, {"exclude", "*.dat"}, {"context", 8}}}},
                {{"params",
                  {{"path", folder},
                   {"exclude", "*.dat"},
                   {"context", 5},
                   {"objective", "masked"},
                   {"test_every", 3}}}},
                {{"params",
                  {{"path", (dir / "skip.dat").string()},
                   {"tokens", "byte"},
                   {"context", 3},
                   {"test_every", 0}}}}})
        .dump();
  } else if (name == "text_classes") {  // a file per class, and label TAB text lines
    std::ofstream(dir / "animals") << "The cat sat.\n%\nA dog barked\nat night.\n%\nOwls.\n";
    std::ofstream(dir / "weather") << "Rain again.\n%\nSun, \u00e9t\u00e9.\n%\n%\nFog.\n";
    std::ofstream(dir / "labelled.tsv") << "pos\tgood day\nneg\tbad day\npos\tfine\n";
    return nlohmann::json::array({{{"params",
                                    {{"path", dir.string()},
                                     {"exclude", "*.tsv"},
                                     {"context", 6},
                                     {"test_every", 3}}}},
                                  {{"params",
                                    {{"path", (dir / "labelled.tsv").string()},
                                     {"tokens", "byte"},
                                     {"context", 4},
                                     {"test_every", 0}}}}})
        .dump();
  } else if (name == "csv") {  // a header, features and 2 targets; a test file
    std::ofstream(dir / "train.csv") << "a,b,c,t1,t2\n1,2,3,0.5,1\n4,5,6,-1,0\n7,8,9,2.5,1\n";
    std::ofstream(dir / "test.csv") << "1,1,1,0,0\n2,2,2,1,1\n";
    params = {{"path", (dir / "train.csv").string()},
              {"test_path", (dir / "test.csv").string()},
              {"targets", 2}};
  } else if (name == "seq2seq") {  // sentence pairs (its synthetic tasks are in its traits)
    std::ofstream(dir / "pairs.tsv") << "one two\tuno dos\nthree\ttres\nfour five\tcuatro\n";
    params = {{"task", "pairs"},
              {"path", (dir / "pairs.tsv").string()},
              {"source_length", 9},
              {"target_length", 8},
              {"test_every", 2}};
  } else {
    return "[]";
  }
  return nlohmann::json::array({{{"params", params}}}).dump();
}

void check_kind(const std::string& kind) {
  int plugins = 0;
  for (const PluginRecord& r : test::plugins().records()) {
    if (r.kind != kind || r.device != Device::cpu || r.status != PluginRecord::Status::ok) continue;
    ++plugins;
    int checked = 0;
    // The plugin's own cases and those that need files written here.
    nlohmann::json cases = nlohmann::json::parse(testing::conformance_cases(r));
    for (const auto& c : nlohmann::json::parse(file_cases(r.name))) cases.push_back(c);
    for (const testing::Check& c : testing::check_plugin(test::plugins(), r, cases.dump())) {
      if (!c.supported) continue;
      ++checked;
      INFO(kind << " " << r.name << ": " << c.what << " at " << c.setting << ": " << c.detail);
      CHECK(c.passed);
    }
    INFO(kind << " " << r.name);
    CHECK(checked > 0);
  }
  CHECK(plugins > 0);
}

}  // namespace

TEST_CASE(
    "conformance: every layer plugin (gradients, dx overwritten, accumulation, partial batch)") {
  check_kind("layer");
}
TEST_CASE("conformance: every optimizer plugin (consumes, descends, any order, state round trip)") {
  check_kind("optimizer");
}
TEST_CASE("conformance: every metric plugin (totals add, finite value, row rules in bounds)") {
  check_kind("metric");
}
TEST_CASE("conformance: every loss plugin (gradient, combined softmax gradient)") {
  check_kind("loss");
}
TEST_CASE("conformance: every dataset plugin (sizes, determinism, one-hot labels, no overrun)") {
  check_kind("dataset");
}
TEST_CASE("conformance: every scheduler plugin (a restored scheduler decides as the first)") {
  check_kind("scheduler");
}
TEST_CASE("conformance: every codec plugin (contraction, adds, error feedback, residuals)") {
  check_kind("codec");
}
TEST_CASE("conformance: the local communicator's collectives (one rank)") {
  LocalCommunicator local;
  for (const testing::Check& c : testing::check_communicator(local)) {
    INFO(c.what << " at " << c.setting);
    CHECK(c.passed);
  }
}
