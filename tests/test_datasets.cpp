// The mnist loader on small IDX files the test writes (raw and gzip'd), and its clear errors for
// truncated, wrong-magic and wrong-count files; the synthetic dataset's determinism.
#include <doctest/doctest.h>
#include <zlib.h>

#include <fstream>

#include "dtnn/dataset.hpp"
#include "test_support.hpp"

using namespace dtnn;
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
