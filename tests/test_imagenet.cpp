// The imagenet (image folder) dataset on JPEG and PNG files the test writes with libjpeg and
// libpng: class folders, resizing and centre cropping, normalisation, prefetching in the
// background, clear errors; and a small CNN that learns the classes from them.
#include <doctest/doctest.h>

// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on
#include <png.h>

#include <array>
#include <fstream>

#include "dtnn/dataset.hpp"
#include "dtnn/experiment.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// An h x w image whose left half is colour a and right half colour b.
std::vector<std::uint8_t> two_colours(int h, int w, std::array<int, 3> a, std::array<int, 3> b) {
  std::vector<std::uint8_t> px(static_cast<std::size_t>(h * w * 3));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c)
        px[static_cast<std::size_t>((y * w + x) * 3 + c)] =
            static_cast<std::uint8_t>(x < w / 2 ? a[c] : b[c]);
  return px;
}

void write_jpeg(const fs::path& file, int h, int w, const std::vector<std::uint8_t>& px) {
  jpeg_compress_struct info{};
  jpeg_error_mgr err{};
  info.err = jpeg_std_error(&err);
  jpeg_create_compress(&info);
  FILE* f = std::fopen(file.c_str(), "wb");
  REQUIRE(f);
  jpeg_stdio_dest(&info, f);
  info.image_width = static_cast<JDIMENSION>(w);
  info.image_height = static_cast<JDIMENSION>(h);
  info.input_components = 3;
  info.in_color_space = JCS_RGB;
  jpeg_set_defaults(&info);
  jpeg_set_quality(&info, 95, TRUE);
  jpeg_start_compress(&info, TRUE);
  while (info.next_scanline < info.image_height) {
    JSAMPROW row =
        const_cast<JSAMPROW>(px.data() + static_cast<std::size_t>(info.next_scanline) * w * 3);
    jpeg_write_scanlines(&info, &row, 1);
  }
  jpeg_finish_compress(&info);
  std::fclose(f);
  jpeg_destroy_compress(&info);
}

void write_png(const fs::path& file, int h, int w, const std::vector<std::uint8_t>& px) {
  png_image png{};
  png.version = PNG_IMAGE_VERSION;
  png.width = static_cast<png_uint_32>(w);
  png.height = static_cast<png_uint_32>(h);
  png.format = PNG_FORMAT_RGB;
  REQUIRE(png_image_write_to_file(&png, file.c_str(), 0, px.data(), 0, nullptr));
}

// train/{blue,red}/ and val/{blue,red}/: red images are red on the left, blue ones blue on the
// left (the other half grey); sizes vary; one PNG per class.
fs::path make_folder(const std::string& name, int per_class) {
  const fs::path root = test::temp_dir(name);
  const std::array<int, 3> red{230, 20, 20}, blue{20, 20, 230}, grey{128, 128, 128};
  for (const char* split : {"train", "val"})
    for (const char* cls : {"blue", "red"}) {
      const fs::path dir = root / split / cls;
      fs::create_directories(dir);
      const auto& colour = std::string(cls) == "red" ? red : blue;
      const int count = std::string(split) == "train" ? per_class : 2;
      for (int i = 0; i < count; ++i) {
        const int h = 24 + 4 * (i % 3), w = 32 + 8 * (i % 2);
        const auto px = two_colours(h, w, colour, grey);
        if (i == 0)
          write_png(dir / ("img" + std::to_string(i) + ".png"), h, w, px);
        else
          write_jpeg(dir / ("img" + std::to_string(i) + ".jpg"), h, w, px);
      }
    }
  return root;
}

std::shared_ptr<Dataset> open(const fs::path& root, bool normalize,
                              const std::string& name = "imagenet") {
  return test::plugins().create_as<Dataset>(
      "dataset", name,
      Params(json{{"path", root.string()}, {"size", 16}, {"resize", 16}, {"normalize", normalize}},
             "exp.json: dataset"));
}

}  // namespace

TEST_CASE("imagenet: class folders, resized and centre-cropped pixels, prefetched alike") {
  const fs::path root = make_folder("imagenet-small", 3);
  auto ds = open(root, false);
  CHECK(ds->num_classes() == 2);
  CHECK(ds->size(Split::train) == 6);
  CHECK(ds->size(Split::test) == 4);
  CHECK(ds->sample_shape(Layout::nhwc) == Shape{16, 16, 3});
  // Sample 3 is red/img0.png (classes in sorted order: blue 0..2, red 3..5): lossless.
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    Tensor x = Tensor::empty(ds->sample_shape(layout).with_batch(2), DType::float32, layout);
    Tensor y = Tensor::empty(Shape{2, 2}, DType::float32);
    const std::vector<std::int64_t> ids{3, 1};
    ds->read(Split::train, ids, x, y);
    auto at = [&](int n, int yy, int xx, int c) {
      return x.data<float>()[n * 768 + (layout == Layout::nhwc ? (yy * 16 + xx) * 3 + c
                                                               : c * 256 + yy * 16 + xx)];
    };
    CHECK(at(0, 8, 1, 0) == doctest::Approx(230 / 255.0).epsilon(1e-6));   // left: red
    CHECK(at(0, 8, 14, 0) == doctest::Approx(128 / 255.0).epsilon(1e-6));  // right: grey
    CHECK(at(1, 8, 1, 2) == doctest::Approx(230 / 255.0).epsilon(0.03));   // a blue JPEG
    CHECK(y.data<float>()[1] == 1.0f);                                     // red
    CHECK(y.data<float>()[2] == 1.0f);                                     // blue
    // The same batch prefetched in the background reads the same.
    Tensor x2 = Tensor::empty(x.shape(), DType::float32, layout), y2 = y;
    y2 = Tensor::empty(y.shape(), DType::float32);
    ds->prefetch(Split::train, ids);
    ds->read(Split::train, ids, x2, y2);
    for (std::int64_t i = 0; i < x.numel(); ++i) CHECK(x2.data<float>()[i] == x.data<float>()[i]);
  }
}

TEST_CASE("the same plugin as dataset \"folder\" reads the same samples") {
  const fs::path root = make_folder("folder-small", 3);
  auto imagenet = open(root, false), folder = open(root, false, "folder");
  REQUIRE(folder->size(Split::train) == imagenet->size(Split::train));
  Tensor a = Tensor::empty(folder->sample_shape(Layout::nhwc).with_batch(2), DType::float32);
  Tensor b = Tensor::empty(a.shape(), DType::float32);
  Tensor ya = Tensor::empty(Shape{2, 2}, DType::float32),
         yb = Tensor::empty(Shape{2, 2}, DType::float32);
  const std::vector<std::int64_t> ids{3, 1};
  imagenet->read(Split::train, ids, a, ya);
  folder->read(Split::train, ids, b, yb);
  for (std::int64_t i = 0; i < a.numel(); ++i) CHECK(b.data<float>()[i] == a.data<float>()[i]);
  for (std::int64_t i = 0; i < ya.numel(); ++i) CHECK(yb.data<float>()[i] == ya.data<float>()[i]);
}

TEST_CASE("imagenet: a broken image and a stray class are refused, naming the file") {
  const fs::path root = make_folder("imagenet-bad", 2);
  std::ofstream(root / "train" / "red" / "img1.jpg", std::ios::binary) << "\xFF\xD8\xFF not really";
  auto ds = open(root, true);
  Tensor x = Tensor::empty(Shape{1, 16, 16, 3}, DType::float32);
  Tensor y = Tensor::empty(Shape{1, 2}, DType::float32);
  const std::vector<std::int64_t> broken{3};
  CHECK(test::error_of([&] { ds->read(Split::train, broken, x, y); }).find("img1.jpg: bad JPEG") !=
        std::string::npos);
  ds->prefetch(Split::train, broken);  // the error comes back from the background too
  CHECK(test::error_of([&] { ds->read(Split::train, broken, x, y); }).find("img1.jpg: bad JPEG") !=
        std::string::npos);
  fs::create_directories(root / "val" / "green");
  CHECK(test::error_of([&] {
          open(root, true);
        }).find("class 'green' is not among train/'s classes") != std::string::npos);
}

TEST_CASE("imagenet: a small CNN learns red from blue images read from folders") {
  const fs::path root = make_folder("imagenet-train", 24);
  json config = json::parse(R"({
    "model": {"layers": [{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1}, {"type": "relu"},
                         {"type": "avgpool2d", "pool": 0}, {"type": "flatten"}, {"type": "fc", "units": 2},
                         {"type": "softmax"}]},
    "training": {"batch_size": 8, "epochs": 4},
    "optimizer": {"name": "adam", "learning_rate": 0.05}})");
  config["dataset"] = {{"name", "imagenet"}, {"path", root.string()}, {"size", 16}, {"resize", 16}};
  config["output"] = {{"progress", "none"}};
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  const History h = e.run();
  REQUIRE(h.test);
  MESSAGE("accuracy " << h.test_before->metrics.at("categorical_accuracy") << " -> "
                      << h.test->metrics.at("categorical_accuracy"));
  CHECK(h.test->metrics.at("categorical_accuracy") == 1.0);
}
