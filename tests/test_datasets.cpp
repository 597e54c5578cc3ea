// The mnist and cifar10 loaders on small files the test writes (raw, gzip'd, a tar.gz archive),
// and their clear errors for truncated, malformed and missing files; the synthetic dataset's
// determinism.
#include <doctest/doctest.h>
#include <zlib.h>

#include <array>
#include <cstring>
#include <fstream>
#include <map>
#include <numeric>

#include "dataset_fixtures.hpp"
#include "dtnn/dataset.hpp"
#include "test_support.hpp"

using namespace dtnn;
using test::cifar_files;
using test::tar;
namespace fs = std::filesystem;

namespace {

std::vector<std::uint8_t> idx(std::uint32_t magic, std::vector<std::uint32_t> dims,
                              std::size_t payload, std::uint8_t fill_mod) {
  std::vector<std::uint8_t> b;
  auto be = [&](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
  };
  be(magic);
  for (auto d : dims) be(d);
  for (std::size_t i = 0; i < payload; ++i) b.push_back(static_cast<std::uint8_t>(i % fill_mod));
  return b;
}

void write(const fs::path& p, const std::vector<std::uint8_t>& bytes, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(p.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(p, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
  }
}

// A valid 4-image training set and 2-image test set of 28x28 in folder; gzip'd or raw.
fs::path make_set(const std::string& name, bool gzip) {
  fs::path d = test::temp_dir(name);
  std::string gz = gzip ? ".gz" : "";
  write(d / ("train-images-idx3-ubyte" + gz), idx(0x803, {4, 28, 28}, 4 * 784, 251), gzip);
  write(d / ("train-labels-idx1-ubyte" + gz), idx(0x801, {4}, 4, 10), gzip);
  write(d / ("t10k-images-idx3-ubyte" + gz), idx(0x803, {2, 28, 28}, 2 * 784, 251), gzip);
  write(d / ("t10k-labels-idx1-ubyte" + gz), idx(0x801, {2}, 2, 10), gzip);
  return d;
}

std::shared_ptr<Dataset> open(const fs::path& d) {
  return test::plugins().create_as<Dataset>(
      "dataset", "mnist", Params(nlohmann::json{{"path", d.string()}}, "exp.json: dataset"));
}

}  // namespace

TEST_CASE("mnist reads gzip'd and raw IDX files") {
  for (bool gzip : {true, false}) {
    auto ds = open(make_set(gzip ? "idx-gz" : "idx-raw", gzip));
    CHECK(ds->size(Split::train) == 4);
    CHECK(ds->size(Split::test) == 2);
    CHECK(ds->sample_shape(Layout::nhwc) == Shape{28, 28, 1});
    CHECK(ds->sample_shape(Layout::nchw) == Shape{1, 28, 28});
    Tensor x = Tensor::empty(Shape{2, 28, 28, 1}, DType::float32),
           y = Tensor::empty(Shape{2, 10}, DType::float32);
    std::int64_t ids[] = {3, 1};
    ds->read(Split::train, ids, x, y);
    // image 3 starts at payload byte 3*784 = 2352; byte i holds i % 251
    CHECK(x.data<float>()[0] == doctest::Approx((2352 % 251) / 255.0f));
    CHECK(x.data<float>()[784 + 5] == doctest::Approx((784 + 5) % 251 / 255.0f));
    CHECK(y.data<float>()[3] == 1.0f);  // label of sample 3 is 3
    CHECK(y.data<float>()[10 + 1] == 1.0f);
    float row_sum = 0;
    for (int c = 0; c < 10; ++c) row_sum += y.data<float>()[c];
    CHECK(row_sum == 1.0f);
  }
}

TEST_CASE("mnist refuses a truncated file, naming it and the sizes") {
  fs::path d = make_set("idx-trunc", false);
  write(d / "train-images-idx3-ubyte", idx(0x803, {4, 28, 28}, 4 * 784 - 100, 251), false);
  std::string e = test::error_of([&] { open(d); });
  CHECK(e == (d / "train-images-idx3-ubyte").string() +
                 ": truncated: the header (4x28x28) promises 3136 data bytes after byte 16, the "
                 "file holds 3036");
  write(d / "train-images-idx3-ubyte", {0, 0, 8}, false);
  CHECK(test::error_of([&] {
          open(d);
        }).find(": truncated at byte 3: expected a 4-byte IDX magic number") != std::string::npos);
}

TEST_CASE("mnist refuses a wrong magic number") {
  fs::path d = make_set("idx-magic", false);
  write(d / "t10k-labels-idx1-ubyte", idx(0x803, {2}, 2, 10), false);
  CHECK(test::error_of([&] { open(d); }) == (d / "t10k-labels-idx1-ubyte").string() +
                                                ": bad magic 0x00000803 at byte 0: expected "
                                                "0x00000801 (IDX, unsigned bytes, 1 dimensions)");
}

TEST_CASE("mnist refuses label and image counts that differ") {
  fs::path d = make_set("idx-count", true);
  write(d / "train-labels-idx1-ubyte.gz", idx(0x801, {3}, 3, 10), true);
  CHECK(test::error_of([&] { open(d); }) ==
        (d / "train-labels-idx1-ubyte.gz").string() + ": holds 3 labels but " +
            (d / "train-images-idx3-ubyte.gz").string() + " holds 4 images");
}

TEST_CASE("mnist names a missing folder or file") {
  CHECK(test::error_of([] { open("/nonexistent"); }) ==
        "exp.json: dataset.path: '/nonexistent' is not a folder");
  fs::path d = make_set("idx-missing", false);
  fs::remove(d / "t10k-images-idx3-ubyte");
  CHECK(test::error_of([&] { open(d); }) ==
        d.string() +
            ": missing t10k-images-idx3-ubyte[.gz] (MNIST/Fashion-MNIST IDX files expected there)");
}

TEST_CASE("synthetic samples are a function of their index") {
  auto ds = test::plugins().create_as<Dataset>(
      "dataset", "synthetic",
      Params(nlohmann::json{{"input_shape", {4, 4, 2}}, {"classes", 3}, {"train_samples", 10}},
             "test"));
  Tensor a = Tensor::empty(Shape{2, 4, 4, 2}, DType::float64),
         ya = Tensor::empty(Shape{2, 3}, DType::float64);
  Tensor b = Tensor::empty(Shape{1, 4, 4, 2}, DType::float64),
         yb = Tensor::empty(Shape{1, 3}, DType::float64);
  std::int64_t ia[] = {5, 7}, ib[] = {7};
  ds->read(Split::train, ia, a, ya);
  ds->read(Split::train, ib, b, yb);
  for (int i = 0; i < 32; ++i) CHECK(a.data<double>()[32 + i] == b.data<double>()[i]);
  for (int c = 0; c < 3; ++c) CHECK(ya.data<double>()[3 + c] == yb.data<double>()[c]);
}

namespace {

std::shared_ptr<Dataset> open_cifar(const fs::path& path, bool standardize) {
  return test::plugins().create_as<Dataset>(
      "dataset", "cifar10",
      Params(nlohmann::json{{"path", path.string()}, {"standardize", standardize}},
             "exp.json: dataset"));
}

}  // namespace

TEST_CASE("cifar10 reads the binary files from a folder and from the .tar.gz in place") {
  const fs::path d = test::temp_dir("cifar-folder");
  for (const auto& [name, bytes] : cifar_files()) write(d / name, bytes, false);
  const fs::path archive = test::temp_dir("cifar-archive") / "cifar-10-binary.tar.gz";
  write(archive, tar(cifar_files(), "cifar-10-batches-bin"), true);
  for (const fs::path& path : {d, archive}) {
    CAPTURE(path);
    auto ds = open_cifar(path, false);
    CHECK(ds->size(Split::train) == 15);
    CHECK(ds->size(Split::test) == 2);
    CHECK(ds->num_classes() == 10);
    for (Layout layout : {Layout::nhwc, Layout::nchw}) {
      Tensor x = Tensor::empty(ds->sample_shape(layout).with_batch(2), DType::float32, layout);
      Tensor y = Tensor::empty(Shape{2, 10}, DType::float32);
      const std::vector<std::int64_t> ids{4, 1};  // record 1 of data_batch_2; record 1 of _1
      ds->read(Split::train, ids, x, y);
      auto at = [&](int n, int c, int p) {
        return x.data<float>()[n * 3072 + (layout == Layout::nhwc ? p * 3 + c : c * 1024 + p)];
      };
      CHECK(at(0, 0, 0) == doctest::Approx((1 * 7 + 0 + 0 + 2) / 255.0));
      CHECK(at(0, 2, 5) == doctest::Approx((1 * 7 + 100 + 5 + 2) / 255.0));
      CHECK(at(1, 1, 1023) == doctest::Approx(((1 * 7 + 50 + 1023 + 1) % 256) / 255.0));
      CHECK(y.data<float>()[3] == 1.0f);       // label (1 + 2) % 10
      CHECK(y.data<float>()[10 + 2] == 1.0f);  // label (1 + 1) % 10
    }
  }
}

TEST_CASE("cifar100 reads fine or coarse classes from a folder and from the .tar.gz in place") {
  const fs::path d = test::temp_dir("cifar100-folder");
  for (const auto& [name, bytes] : test::cifar100_files()) write(d / name, bytes, false);
  const fs::path archive = test::temp_dir("cifar100-archive") / "cifar-100-binary.tar.gz";
  write(archive, tar(test::cifar100_files(), "cifar-100-binary"), true);
  auto open = [](const fs::path& path, const std::string& labels) {
    return test::plugins().create_as<Dataset>(
        "dataset", "cifar100",
        Params(nlohmann::json{{"path", path.string()}, {"labels", labels}, {"standardize", false}},
               "exp.json: dataset"));
  };
  for (const fs::path& path : {d, archive}) {
    CAPTURE(path);
    for (const std::string labels : {"fine", "coarse"}) {
      auto ds = open(path, labels);
      const std::int64_t classes = labels == "fine" ? 100 : 20;
      CHECK(ds->size(Split::train) == 6);
      CHECK(ds->size(Split::test) == 2);
      CHECK(ds->num_classes() == classes);
      Tensor x = Tensor::empty(ds->sample_shape(Layout::nhwc).with_batch(2), DType::float32);
      Tensor y = Tensor::empty(Shape{2, classes}, DType::float32);
      const std::vector<std::int64_t> ids{4, 1};
      ds->read(Split::train, ids, x, y);
      // record 4 of train.bin (seed 90): pixel (c=2, p=5) = (4 * 7 + 100 + 5 + 90) % 256
      CHECK(x.data<float>()[5 * 3 + 2] == doctest::Approx(((4 * 7 + 100 + 5 + 90) % 256) / 255.0));
      const int fine4 = (4 * 13 + 90) % 100, coarse4 = (4 + 90) % 20;
      const int fine1 = (1 * 13 + 90) % 100, coarse1 = (1 + 90) % 20;
      CHECK(y.data<float>()[labels == "fine" ? fine4 : coarse4] == 1.0f);
      CHECK(y.data<float>()[classes + (labels == "fine" ? fine1 : coarse1)] == 1.0f);
    }
  }
  auto bad = test::cifar100_files()["train.bin"];
  bad[3074 + 1] = 100;  // record 1's fine class
  write(d / "train.bin", bad, false);
  CHECK(test::error_of([&] {
          open(d, "fine");
        }).find("train.bin: label 100 at byte 3075: expected a class in 0..99") !=
        std::string::npos);
  CHECK(open(d, "coarse")->num_classes() == 20);  // its coarse classes are still good
  CHECK(test::error_of([&] {
          open(d, "medium");
        }).find("labels: expected \"fine\" (100 classes) or \"coarse\"") != std::string::npos);
  write(d / "train.bin", test::cifar100_files()["train.bin"], false);
  fs::remove(d / "test.bin");
  CHECK(test::error_of([&] {
          open(d, "fine");
        }).find("test.bin: missing (CIFAR-100 binary version expected: train.bin, test.bin)") !=
        std::string::npos);
}

TEST_CASE("cifar10 standardises each channel with the training split's statistics") {
  const fs::path d = test::temp_dir("cifar-std");
  for (const auto& [name, bytes] : cifar_files()) write(d / name, bytes, false);
  auto ds = open_cifar(d, true);
  Tensor x = Tensor::empty(Shape{15, 32, 32, 3}, DType::float64);
  Tensor y = Tensor::empty(Shape{15, 10}, DType::float64);
  std::vector<std::int64_t> all(15);
  std::iota(all.begin(), all.end(), 0);
  ds->read(Split::train, all, x, y);
  for (int c = 0; c < 3; ++c) {
    double sum = 0, sum2 = 0;
    for (std::int64_t i = c; i < x.numel(); i += 3) {
      sum += x.data<double>()[i];
      sum2 += x.data<double>()[i] * x.data<double>()[i];
    }
    const double n = double(x.numel() / 3);
    CHECK(sum / n == doctest::Approx(0.0).epsilon(1e-9).scale(1.0));
    CHECK(sum2 / n == doctest::Approx(1.0).epsilon(1e-9));
  }
}

TEST_CASE("a cifar10 archive's members are matched by their whole path, each path once") {
  auto files = cifar_files();
  auto members = [](std::vector<std::uint8_t> archive) {  // without the end-of-archive blocks
    archive.resize(archive.size() - 1024);
    return archive;
  };
  auto join = [](std::vector<std::uint8_t> a, const std::vector<std::uint8_t>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::map<std::string, std::vector<std::uint8_t>> stray{
      {"test_batch.bin", test::cifar_records(5, 3)}};
  const fs::path archive = test::temp_dir("cifar-stray") / "cifar-10-binary.tar.gz";
  // The real members, then a test_batch.bin of 5 records in another folder: never taken.
  write(archive, join(members(tar(files, "cifar-10-batches-bin")), tar(stray, "evil")), true);
  CHECK(open_cifar(archive, false)->size(Split::test) == 2);
  // Only the stray one: refused, naming the path looked for.
  auto without_test = files;
  without_test.erase("test_batch.bin");
  write(archive, join(members(tar(without_test, "cifar-10-batches-bin")), tar(stray, "evil")),
        true);
  CHECK(test::error_of([&] {
          open_cifar(archive, false);
        }).find("holds no cifar-10-batches-bin/test_batch.bin") != std::string::npos);
  // The same path twice: which copy is meant is not guessed.
  write(archive,
        join(members(tar(files, "cifar-10-batches-bin")), tar(stray, "cifar-10-batches-bin")),
        true);
  CHECK(test::error_of([&] {
          open_cifar(archive, false);
        }).find("the member 'cifar-10-batches-bin/test_batch.bin' again at byte") !=
        std::string::npos);
}

TEST_CASE("cifar10 refuses truncated files, bad labels and corrupt archives, naming them") {
  auto files = cifar_files();
  const fs::path d = test::temp_dir("cifar-bad");
  for (const auto& [name, bytes] : files) write(d / name, bytes, false);
  auto truncated = files["data_batch_3.bin"];
  truncated.resize(truncated.size() - 10);
  write(d / "data_batch_3.bin", truncated, false);
  CHECK(test::error_of([&] {
          open_cifar(d, true);
        }).find("data_batch_3.bin: truncated at byte 6146") != std::string::npos);
  auto bad_label = files["data_batch_3.bin"];
  bad_label[3073] = 12;
  write(d / "data_batch_3.bin", bad_label, false);
  CHECK(test::error_of([&] {
          open_cifar(d, true);
        }).find("data_batch_3.bin: label 12 at byte 3073: expected a class in 0..9") !=
        std::string::npos);
  write(d / "data_batch_3.bin", files["data_batch_3.bin"], false);
  fs::remove(d / "test_batch.bin");
  CHECK(test::error_of([&] { open_cifar(d, true); }).find("test_batch.bin: missing") !=
        std::string::npos);
  auto archive_bytes = tar(files, "cifar-10-batches-bin");
  // The second member's header, after the first header and the first file's padded 9219 bytes.
  archive_bytes[512 + 9728 + 3] ^= 0x5a;
  const fs::path archive = test::temp_dir("cifar-bad-archive") / "cifar-10-binary.tar.gz";
  write(archive, archive_bytes, true);
  CHECK(test::error_of([&] { open_cifar(archive, true); }).find("bad header checksum") !=
        std::string::npos);
  CHECK(test::error_of([&] { open_cifar(d / "nope", true); }).find("neither a folder nor") !=
        std::string::npos);
}

namespace {
// PyDTNN 3.x's cyclone/tsunamis layout: records of one label byte, then `pixels` bytes; record r
// of a file has label labels[r] and pixel p = (salt + r * 11 + p) % 256.
std::vector<std::uint8_t> records(const std::vector<std::uint8_t>& labels, std::int64_t pixels,
                                  int salt) {
  std::vector<std::uint8_t> b;
  for (std::size_t r = 0; r < labels.size(); ++r) {
    b.push_back(labels[r]);
    for (std::int64_t p = 0; p < pixels; ++p)
      b.push_back(static_cast<std::uint8_t>((salt + std::int64_t(r) * 11 + p) % 256));
  }
  return b;
}
std::map<std::string, std::vector<std::uint8_t>> batches(std::int64_t pixels) {
  std::map<std::string, std::vector<std::uint8_t>> files;
  for (int i = 1; i <= 5; ++i)
    files["data_batch_" + std::to_string(i) + ".bin"] = records({0, 1}, pixels, i);
  files["test_batch.bin"] = records({1, 0, 1}, pixels, 9);
  return files;
}
}  // namespace

TEST_CASE("cyclone and tsunamis (PyDTNN 3.x) read their archive from the folder that holds it") {
  struct Case {
    const char *name, *folder, *archive;
    std::int64_t c, h, w;
  };
  for (const Case& k :
       {Case{"cyclone", "cyclone-batches-bin", "cyclone-binary.tar.gz", 5, 40, 40},
        Case{"tsunamis", "tsunamis-batches-bin", "tsunamis-binary.tar.gz", 1, 80, 80}}) {
    CAPTURE(k.name);
    const std::int64_t pixels = k.c * k.h * k.w;
    const fs::path d = test::temp_dir(std::string(k.name) + "-path");
    write(d / k.archive, tar(batches(pixels), k.folder), true);  // as 3.x's --dataset-path has it
    auto ds = test::plugins().create_as<Dataset>(
        "dataset", k.name, Params(nlohmann::json{{"path", d.string()}}, "exp.json: dataset"));
    CHECK(ds->size(Split::train) == 10);
    CHECK(ds->size(Split::test) == 3);
    CHECK(ds->sample_shape(Layout::nhwc) == Shape{k.h, k.w, k.c});
    const bool binary = std::string(k.name) == "tsunamis";
    CHECK(ds->num_classes() == (binary ? 1 : 2));
    CHECK(ds->value_labels() == binary);
    Tensor x =
        Tensor::empty(ds->sample_shape(Layout::nchw).with_batch(2), DType::float32, Layout::nchw);
    Tensor y = Tensor::empty(ds->label_shape().with_batch(2), DType::float32);
    const std::vector<std::int64_t> ids{3, 0};  // record 1 of data_batch_2; record 0 of _1
    ds->read(Split::train, ids, x, y);
    // NCHW is the file's order: sample 0's pixel p is (2 + 11 + p) % 256, scaled by 1/255.
    CHECK(x.data<float>()[0] == doctest::Approx(13 / 255.0));
    CHECK(x.data<float>()[pixels - 1] == doctest::Approx(((13 + pixels - 1) % 256) / 255.0));
    CHECK(x.data<float>()[pixels] == doctest::Approx(1 / 255.0));
    if (binary) {
      CHECK(y.data<float>()[0] == 1.0f);
      CHECK(y.data<float>()[1] == 0.0f);
    } else {
      CHECK(y.data<float>()[1] == 1.0f);  // sample 0: class 1 of 2
      CHECK(y.data<float>()[2] == 1.0f);  // sample 1: class 0
    }
  }
  // A label outside {0, 1} and a short file are refused, naming the file and the byte.
  const fs::path d = test::temp_dir("tsunamis-bad");
  auto files = batches(6400);
  files["test_batch.bin"] = records({1, 2}, 6400, 0);
  for (const auto& [name, bytes] : files) write(d / name, bytes, false);
  CHECK(test::error_of([&] {
          test::plugins().create_as<Dataset>(
              "dataset", "tsunamis",
              Params(nlohmann::json{{"path", d.string()}}, "exp.json: dataset"));
        }) == (d / "test_batch.bin").string() + ": label 2 at byte 6401: expected a class in 0..1");
  files["test_batch.bin"] = records({1}, 6399, 0);
  write(d / "test_batch.bin", files["test_batch.bin"], false);
  CHECK(test::error_of([&] {
          test::plugins().create_as<Dataset>(
              "dataset", "tsunamis",
              Params(nlohmann::json{{"path", d.string()}}, "exp.json: dataset"));
        })
            .find("test_batch.bin: truncated at byte 0: records are 6401 bytes (a label, then "
                  "1x80x80 pixels)") != std::string::npos);
}
