// The imagenet (image folder) dataset on JPEG and PNG files the test writes with libjpeg and
// libpng: class folders, resizing and centre cropping, normalisation, prefetching in the
// background, clear errors; and a small CNN that learns the classes from them.
#include <doctest/doctest.h>

#include <array>
#include <fstream>

#include "dataset_fixtures.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/experiment.hpp"
#include "test_support.hpp"

using namespace dtnn;
using namespace dtnn::test;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

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

namespace {

std::shared_ptr<Dataset> open_labelled(const fs::path& root,
                                       nlohmann::json more = nlohmann::json::object()) {
  nlohmann::json params = {{"path", root.string()}, {"size", 16}, {"resize", 16}};
  params.update(more);
  return test::plugins().create_as<Dataset>("dataset", "image_labels",
                                            Params(params, "exp.json: dataset"));
}

}  // namespace

TEST_CASE("image_labels: a CSV's labels as 0/1 columns, images found by name, the lists' splits") {
  const fs::path root = test::make_labelled_images("labelled", 16, true);
  auto ds = open_labelled(root);
  CHECK(ds->value_labels());
  CHECK(ds->num_classes() == 3);  // Effusion, Mass, No Finding (sorted)
  CHECK(ds->size(Split::train) == 12);
  CHECK(ds->size(Split::test) == 4);
  CHECK(ds->sample_shape(Layout::nhwc) == Shape{16, 16, 1});
  for (bool prefetch : {false, true}) {
    CAPTURE(prefetch);
    Tensor x = Tensor::empty(Shape{3, 16, 16, 1}, DType::float32);
    Tensor y = Tensor::empty(Shape{3, 3}, DType::float32);
    const std::vector<std::int64_t> ids{1, 2, 0};  // train images 101 (Mass), 102 (Effusion), 100
    if (prefetch) ds->prefetch(Split::train, ids);
    ds->read(Split::train, ids, x, y);
    const std::vector<float> labels(y.data<float>(), y.data<float>() + 9);
    CHECK(labels == std::vector<float>{0, 1, 0, 1, 0, 0, 0, 0, 1});
    // Image 101: bright top (200 + (7 + x) % 20), dark bottom, grey: one channel, / 255.
    CHECK(x.data<float>()[0] == doctest::Approx((200 + 7 % 20) / 255.0).epsilon(0.02));
    CHECK(x.data<float>()[15 * 16] == doctest::Approx((30 + 7 % 20) / 255.0).epsilon(0.05));
  }
  Tensor x = Tensor::empty(Shape{1, 16, 16, 1}, DType::float32),
         y = Tensor::empty(Shape{1, 3}, DType::float32);
  const std::vector<std::int64_t> first{0};
  ds->read(Split::test, first, x, y);  // image 112: No Finding
  CHECK(std::vector<float>(y.data<float>(), y.data<float>() + 3) == std::vector<float>{0, 0, 1});
  const std::vector<std::int64_t> last{3};
  ds->read(Split::test, last, x, y);  // image 115: Effusion|Mass
  CHECK(std::vector<float>(y.data<float>(), y.data<float>() + 3) == std::vector<float>{1, 1, 0});

  // PyDTNN 3.x's name of the dataset reaches the same plugin.
  CHECK(test::plugins()
            .create_as<Dataset>(
                "dataset", "chestxray",
                Params(nlohmann::json{{"path", root.string()}, {"size", 16}}, "exp.json: dataset"))
            ->size(Split::test) == 4);
  // Without the lists every test_every-th row is a test image; given classes fix the columns.
  fs::remove(root / "test_list.txt");
  auto every = open_labelled(root, {{"test_every", 4},
                                    {"channels", 3},
                                    {"classes", {"No Finding", "Mass", "Effusion", "Nodule"}}});
  CHECK(every->size(Split::test) == 4);
  CHECK(every->num_classes() == 4);  // Effusion, Mass, No Finding, Nodule
  CHECK(every->sample_shape(Layout::nhwc) == Shape{16, 16, 3});
}

TEST_CASE("image_labels: bad CSVs and lists are refused, naming the file and line") {
  const fs::path root = test::make_labelled_images("labelled-bad", 8, true);
  CHECK(test::error_of([&] {
          open_labelled(root, {{"image_column", "Image"}});
        })
            .find("Data_Entry_2017_v2020.csv: line 1: no column 'Image' (exp.json: "
                  "dataset.image_column)") != std::string::npos);
  CHECK(test::error_of([&] {
          open_labelled(root, {{"classes", {"Mass", "No Finding"}}});
        }).find("line 4: label 'Effusion' is not among exp.json: dataset.classes") !=
        std::string::npos);
  std::ofstream(root / "test_list.txt", std::ios::app) << "999.png\n";
  CHECK(test::error_of([&] {
          open_labelled(root);
        }).find("test_list.txt: line 1: image '999.png' has no row in") != std::string::npos);
  std::ofstream(root / "Data_Entry_2017_v2020.csv", std::ios::app) << "999.png,Mass,9\n";
  CHECK(test::error_of([&] {
          open_labelled(root);
        }).find("test_list.txt: line 1: image '999.png' is not under") != std::string::npos);
  std::ofstream(root / "Data_Entry_2017_v2020.csv", std::ios::app) << "100.png,Mass,9\n";
  CHECK(test::error_of([&] {
          open_labelled(root);
        }).find("line 11: image '100.png' is labelled a second time") != std::string::npos);
}

TEST_CASE("image_labels: a small model learns two findings at once (binary cross-entropy)") {
  const fs::path root = test::make_labelled_images("labelled-train", 64, true);
  json config = json::parse(R"({
    "model": {"layers": [{"type": "flatten"}, {"type": "fc", "units": 16}, {"type": "relu"},
                         {"type": "fc", "units": "$classes"}, {"type": "sigmoid"}]},
    "loss": "binary_cross_entropy", "metrics": [],
    "training": {"batch_size": 8, "epochs": 40},
    "optimizer": {"name": "adam", "learning_rate": 0.01}})");
  config["dataset"] = {
      {"name", "image_labels"}, {"path", root.string()}, {"size", 16}, {"resize", 16}};
  config["output"] = {{"progress", "none"}};
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  const History h = e.run();
  REQUIRE(h.test);
  MESSAGE("test binary cross-entropy " << h.test_before->loss << " -> " << h.test->loss);
  CHECK(h.test_before->loss > 0.5);  // about ln 2 untrained
  CHECK(h.test->loss < 0.1);
}
