// PyDTNN's data options for every dataset: augmentation (flip, random crop with padding),
// normalisation, dataset percentage (under- and oversampling), test set as validation.
#include <doctest/doctest.h>

#include <omp.h>

#include <numeric>
#include <set>

#include "dtnn/augmentation.hpp"
#include "dtnn/experiment.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

// One 3x4 image with 2 channels: value (y, x, c) = 100 c + 10 y + x + 1 (never 0).
Tensor image(Layout layout, std::int64_t copies = 1) {
  const Shape s = layout == Layout::nhwc ? Shape{copies, 3, 4, 2} : Shape{copies, 2, 3, 4};
  Tensor t = Tensor::empty(s, DType::float64, layout);
  for (std::int64_t n = 0; n < copies; ++n)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x)
        for (int c = 0; c < 2; ++c)
          t.data<double>()[n * 24 + (layout == Layout::nhwc ? (y * 4 + x) * 2 + c : (c * 3 + y) * 4 + x)] =
              100 * c + 10 * y + x + 1;
  return t;
}
double value(const Tensor& t, std::int64_t n, int y, int x, int c) {
  return t.data<double>()[n * 24 + (t.layout() == Layout::nhwc ? (y * 4 + x) * 2 + c : (c * 3 + y) * 4 + x)];
}

History run(json config) {
  config["output"] = {{"progress", "none"}};
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  return e.run();
}

}  // namespace

TEST_CASE("augment: a flip mirrors each row; a crop shifts the image, zeros coming in") {
  Tensor scratch = Tensor::empty(Shape{24 * std::max(1, omp_get_max_threads())}, DType::float64);
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(to_string(layout));
    Tensor x = image(layout);
    const std::vector<std::int64_t> id{7};
    AugmentOptions flip;
    flip.horizontal_flip = 1.0;
    augment(x, id, flip, 42, scratch);
    for (int y = 0; y < 3; ++y)
      for (int xx = 0; xx < 4; ++xx)
        for (int c = 0; c < 2; ++c) CHECK(value(x, 0, y, xx, c) == 100 * c + 10 * y + (3 - xx) + 1);
    // A crop: the result must be the image shifted by one (dy, dx) in [-1, 1]^2, zero outside;
    // over many samples every one of the nine shifts turns up.
    AugmentOptions crop;
    crop.random_crop = 1.0;
    crop.crop_padding = 1;
    std::set<std::pair<int, int>> seen;
    Tensor many = image(layout, 200);
    std::vector<std::int64_t> ids(200);
    std::iota(ids.begin(), ids.end(), 0);
    augment(many, ids, crop, 42, scratch);
    for (std::int64_t n = 0; n < 200; ++n) {
      int found = 0;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          bool match = true;
          for (int y = 0; y < 3 && match; ++y)
            for (int xx = 0; xx < 4 && match; ++xx)
              for (int c = 0; c < 2 && match; ++c) {
                const int sy = y + dy, sx = xx + dx;
                const double expected =
                    sy >= 0 && sy < 3 && sx >= 0 && sx < 4 ? 100 * c + 10 * sy + sx + 1 : 0;
                match = value(many, n, y, xx, c) == expected;
              }
          if (match) {
            ++found;
            seen.insert({dy, dx});
          }
        }
      CHECK(found == 1);
    }
    CHECK(seen.size() == 9);
  }
}

TEST_CASE("augment: each sample's draws depend on the seed and its index, at the given rate") {
  Tensor scratch = Tensor::empty(Shape{24 * std::max(1, omp_get_max_threads())}, DType::float64);
  AugmentOptions half;
  half.horizontal_flip = 0.5;
  std::vector<std::int64_t> ids(400);
  std::iota(ids.begin(), ids.end(), 1000);
  Tensor a = image(Layout::nhwc, 400), b = image(Layout::nhwc, 400);
  augment(a, ids, half, 5, scratch);
  augment(b, ids, half, 5, scratch);
  int flipped = 0;
  for (std::int64_t n = 0; n < 400; ++n) {
    flipped += value(a, n, 0, 0, 0) != 1;
    CHECK(value(a, n, 0, 0, 0) == value(b, n, 0, 0, 0));  // the same seed: the same draws
  }
  CHECK(flipped > 160);
  CHECK(flipped < 240);
  Tensor c = image(Layout::nhwc, 400);
  augment(c, ids, half, 6, scratch);  // another seed (epoch): other draws
  int differ = 0;
  for (std::int64_t n = 0; n < 400; ++n) differ += value(a, n, 0, 0, 0) != value(c, n, 0, 0, 0);
  CHECK(differ > 100);
}

TEST_CASE("dataset percentage, test as validation and normalisation in a run") {
  const json base = json::parse(R"({
    "model": {"layers": [{"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [4, 4, 2], "classes": 3, "train_samples": 100,
                "test_samples": 30},
    "training": {"batch_size": 10, "epochs": 1, "evaluate": false}})");
  json under = base, over = base, test_val = base;
  under["dataset"]["percentage"] = 0.5;
  over["dataset"]["percentage"] = 2.5;
  CHECK(run(under).train_samples == 50);
  CHECK(run(over).train_samples == 250);
  test_val["dataset"]["test_as_validation"] = true;
  const History h = run(test_val);
  REQUIRE(h.epochs.size() == 1);
  REQUIRE(h.epochs[0].validation);
  CHECK(h.epochs[0].validation->samples == 30);
  // Normalisation scales what the model sees: with scale 0 every input is the offset, so every
  // sample gets the same prediction and the test loss is the same for any labels' order.
  json flat = base;
  flat["training"]["evaluate"] = true;
  flat["dataset"]["normalize_scale"] = 0.0;
  flat["dataset"]["normalize_offset"] = 0.0;
  flat["training"]["epochs"] = 0;
  const History zero = run(flat);
  REQUIRE(zero.test);
  CHECK(zero.test->loss == doctest::Approx(std::log(3.0)).epsilon(1e-6));  // softmax of zeros
  json bad = base;
  bad["dataset"]["augment_horizontal_flip"] = 1.5;
  CHECK(test::error_of([&] { run(bad); }).find("dataset.augment_horizontal_flip: expected a probability") !=
        std::string::npos);
}

TEST_CASE("normalize: offset and scale, then per-channel mean and deviation, in both layouts") {
  AugmentOptions o;
  o.normalize_scale = 2.0;
  o.normalize_offset = -1.0;
  o.channel_mean = {1.0, 201.0};
  o.channel_std = {2.0, 4.0};
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(to_string(layout));
    Tensor x = image(layout);
    normalize(x, o);
    for (int y = 0; y < 3; ++y)
      for (int xx = 0; xx < 4; ++xx)
        for (int c = 0; c < 2; ++c) {
          const double v = (100 * c + 10 * y + xx + 1) * 2.0 - 1.0;
          CHECK(value(x, 0, y, xx, c) == doctest::Approx((v - o.channel_mean[c]) / o.channel_std[c]));
        }
  }
  json bad = json::parse(R"({
    "model": {"layers": [{"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [4, 4, 2], "classes": 3, "normalize_mean": [0, 0],
                "normalize_std": [1]}})");
  CHECK(test::error_of([&] { run(bad); }).find("dataset.normalize_std: expected as many positive numbers") !=
        std::string::npos);
  bad["dataset"]["normalize_mean"] = {0, 0, 0};
  bad["dataset"]["normalize_std"] = {1, 1, 1};
  CHECK(test::error_of([&] { run(bad); }).find("dataset.normalize_mean: 3 values, but the samples (4, 4, 2) have 2 channels") !=
        std::string::npos);
}
