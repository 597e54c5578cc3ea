// BatchLoader (training batches made a step ahead in a background thread) and the image
// transforms every dataset can be wrapped in (central crop, resize).
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <numeric>
#include <set>
#include <thread>

#include "dtnn/batch_loader.hpp"
#include "dtnn/error.hpp"
#include "dtnn/experiment.hpp"
#include "dtnn/image_transform.hpp"
#include "test_support.hpp"

using namespace dtnn;
using nlohmann::json;

namespace {

// In-memory images of h x w x c: value (i, y, x, ch) = 1000 i + 100 ch + 10 y + x, label i % 3.
// Records the threads that read it; reading sample `poison` throws.
class Ramps final : public Dataset {
 public:
  Ramps(std::int64_t h, std::int64_t w, std::int64_t c) : h_(h), w_(w), c_(c) {}
  Shape sample_shape(Layout layout) const override {
    return layout == Layout::nhwc ? Shape{h_, w_, c_} : Shape{c_, h_, w_};
  }
  std::int64_t num_classes() const override { return 3; }
  std::int64_t size(Split) const override { return 1000; }
  void read(Split, std::span<const std::int64_t> indices, Tensor& x, Tensor& y) const override {
    {
      std::lock_guard lock(mutex_);
      readers_.insert(std::this_thread::get_id());
      ++reads_;
    }
    const bool nhwc = x.layout() == Layout::nhwc;
    for (std::size_t k = 0; k < indices.size(); ++k) {
      const std::int64_t i = indices[k];
      if (i == poison) throw Error("ramps: sample " + std::to_string(i) + " is unreadable");
      for (std::int64_t yy = 0; yy < h_; ++yy)
        for (std::int64_t xx = 0; xx < w_; ++xx)
          for (std::int64_t ch = 0; ch < c_; ++ch) {
            const std::int64_t at = nhwc ? (yy * w_ + xx) * c_ + ch : (ch * h_ + yy) * w_ + xx;
            x.data<double>()[std::int64_t(k) * h_ * w_ * c_ + at] =
                double(1000 * i + 100 * ch + 10 * yy + xx);
          }
      for (std::int64_t j = 0; j < 3; ++j) y.data<double>()[std::int64_t(k) * 3 + j] = j == i % 3;
    }
  }
  std::set<std::thread::id> readers() const {
    std::lock_guard lock(mutex_);
    return readers_;
  }
  int reads() const {
    std::lock_guard lock(mutex_);
    return reads_;
  }
  std::int64_t poison = -1;

 private:
  std::int64_t h_, w_, c_;
  mutable std::mutex mutex_;
  mutable std::set<std::thread::id> readers_;
  mutable int reads_ = 0;
};

std::vector<double> values(const Tensor& t) {
  return {t.data<double>(), t.data<double>() + t.numel()};
}

}  // namespace

TEST_CASE("batch loader: a prefetched batch is the batch made in place, made on another thread") {
  AugmentOptions augment;  // augmentation and normalisation take part too
  augment.horizontal_flip = 0.5;
  augment.random_crop = 0.5;
  augment.crop_padding = 1;
  augment.normalize_scale = 0.5;
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(to_string(layout));
    Ramps data(5, 6, 2), same(5, 6, 2);
    BatchLoader ahead(data, augment, 8, DType::float64, layout, true);
    BatchLoader in_place(same, augment, 8, DType::float64, layout, false);
    CHECK(ahead.prefetching());
    CHECK_FALSE(in_place.prefetching());
    const std::vector<std::vector<std::int64_t>> steps = {
        {3, 1, 4, 1, 5, 9, 2, 6}, {5, 3, 5}, {8, 9, 7, 9, 3, 2, 3, 8}};
    for (std::size_t s = 0; s < steps.size(); ++s) {
      auto [x, y] = ahead.take(steps[s], 77);
      if (s + 1 < steps.size()) ahead.request(steps[s + 1], 77);
      auto [x0, y0] = in_place.take(steps[s], 77);
      CHECK(x.dim(0) == std::int64_t(steps[s].size()));
      CHECK(values(x) == values(x0));
      CHECK(values(y) == values(y0));
    }
    // Steps 2 and 3 were read by the loader's thread, not this one, and only there.
    CHECK(data.reads() == 3);
    const auto readers = data.readers();
    CHECK(readers.size() == 2);
    CHECK(readers.count(std::this_thread::get_id()) == 1);
  }
}

TEST_CASE("batch loader: a batch other than the requested one, and an error in the background") {
  Ramps data(2, 2, 1);
  BatchLoader loader(data, AugmentOptions{}, 4, DType::float64, Layout::nhwc, true);
  loader.request(std::vector<std::int64_t>{1, 2}, 0);
  auto [x, y] = loader.take(std::vector<std::int64_t>{7}, 0);  // not what was requested
  REQUIRE(x.dim(0) == 1);
  CHECK(x.data<double>()[3] == 7011.0);  // sample 7, pixel (1, 1)
  CHECK(values(y) == std::vector<double>{0, 1, 0});
  // The same samples with another augmentation seed are another batch too.
  loader.request(std::vector<std::int64_t>{2}, 5);
  CHECK(loader.take(std::vector<std::int64_t>{2}, 6).x.data<double>()[0] == 2000.0);

  data.poison = 3;
  loader.request(std::vector<std::int64_t>{2, 3}, 0);
  CHECK_THROWS_WITH_AS(loader.take(std::vector<std::int64_t>{2, 3}, 0),
                       doctest::Contains("sample 3 is unreadable"), Error);
  data.poison = -1;
  CHECK(loader.take(std::vector<std::int64_t>{2, 3}, 0).x.data<double>()[4] == 3000.0);
}

TEST_CASE("training with and without prefetching gives the same weights") {
  json config = json::parse(R"({
    "model": {"layers": [{"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1}, {"type": "relu"},
                         {"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [6, 6, 2], "classes": 3, "train_samples": 90,
                "test_samples": 20, "augment_horizontal_flip": 0.5, "augment_random_crop": 0.5},
    "training": {"batch_size": 16, "epochs": 2, "evaluate": false},
    "output": {"progress": "none"}
  })");
  std::vector<std::vector<double>> weights;
  for (bool prefetch : {true, false}) {
    config["dataset"]["prefetch"] = prefetch;
    Experiment e(make_experiment(config, {}, "test"), test::plugins());
    e.run();
    std::vector<double> w;
    for (const Parameter& p : e.model().parameters()) {
      const Tensor& t = p.value;
      for (std::int64_t i = 0; i < t.numel(); ++i) w.push_back(t.data<float>()[i]);
    }
    weights.push_back(std::move(w));
  }
  CHECK(weights[0] == weights[1]);
}

TEST_CASE("resample axis: PyDTNN's central crop margins, then pixel-centre bilinear sampling") {
  // 28 at 0.875: round(1.75) = 2 from each side.
  ResampleAxis a = ResampleAxis::make(28, 0.875, 0);
  CHECK(a.out == 24);
  CHECK(a.first.front() == 2);
  CHECK(a.first.back() == 25);
  CHECK(a.weight.front() == 0.0);
  // Ties round to even, as Python's round: 10 at 0.5 leaves 2.5 -> 2 from each side.
  CHECK(ResampleAxis::make(10, 0.5, 0).out == 6);
  // Halving 8 -> 4 samples between source pixels 2i and 2i + 1.
  ResampleAxis half = ResampleAxis::make(8, 1.0, 4);
  CHECK(half.first == std::vector<std::int64_t>{0, 2, 4, 6});
  CHECK(half.weight == std::vector<double>{0.5, 0.5, 0.5, 0.5});
  CHECK_THROWS_WITH_AS(ResampleAxis::make(2, 0.1, 0), doctest::Contains("leaves no pixel"), Error);
}

TEST_CASE("transformed dataset: crop and resize in both layouts, bad options are refused") {
  auto data = std::make_shared<Ramps>(8, 10, 2);
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(to_string(layout));
    const bool nhwc = layout == Layout::nhwc;
    // Central crop 0.5: 8x10 -> rows 2..5, columns round(2.5) = 2 .. 7; values copied exactly.
    TransformOptions crop;
    crop.central_crop = 0.5;
    TransformedDataset cropped(data, crop, 4, DType::float64, layout);
    CHECK(cropped.sample_shape(Layout::nhwc) == Shape{4, 6, 2});
    Tensor x = Tensor::empty(cropped.sample_shape(layout).with_batch(2), DType::float64, layout);
    Tensor y = Tensor::empty(Shape{2, 3}, DType::float64, layout);
    cropped.read(Split::train, std::vector<std::int64_t>{4, 1}, x, y);
    auto at = [&](const Tensor& t, std::int64_t i, std::int64_t h, std::int64_t w, std::int64_t r,
                  std::int64_t c, std::int64_t ch) {
      return t.data<double>()[i * h * w * 2 + (nhwc ? (r * w + c) * 2 + ch : (ch * h + r) * w + c)];
    };
    for (std::int64_t r = 0; r < 4; ++r)
      for (std::int64_t c = 0; c < 6; ++c)
        for (std::int64_t ch = 0; ch < 2; ++ch) {
          CHECK(at(x, 0, 4, 6, r, c, ch) == 4000 + 100 * ch + 10 * (r + 2) + (c + 2));
          CHECK(at(x, 1, 4, 6, r, c, ch) == 1000 + 100 * ch + 10 * (r + 2) + (c + 2));
        }
    CHECK(values(y) == std::vector<double>{0, 1, 0, 0, 1, 0});
    // Resize to 4x4: bilinear is exact on the ramp, rows 2r + 0.5 and columns 2.5c + 0.75.
    TransformOptions resize;
    resize.resize_height = resize.resize_width = 4;
    TransformedDataset resized(data, resize, 4, DType::float64, layout);
    Tensor z = Tensor::empty(resized.sample_shape(layout).with_batch(1), DType::float64, layout);
    resized.read(Split::train, std::vector<std::int64_t>{2}, z, y);
    for (std::int64_t r = 0; r < 4; ++r)
      for (std::int64_t c = 0; c < 4; ++c)
        CHECK(at(z, 0, 4, 4, r, c, 1) ==
              doctest::Approx(2100 + 10 * (2 * r + 0.5) + (2.5 * c + 0.75)));
  }
  TransformOptions bad;
  bad.central_crop = 1.5;
  CHECK_THROWS_WITH_AS(TransformedDataset(data, bad, 4, DType::float64, Layout::nhwc),
                       doctest::Contains("(0, 1]"), Error);
  TransformOptions resize;
  resize.resize_height = resize.resize_width = 4;
  CHECK_THROWS_WITH_AS(
      TransformedDataset(std::make_shared<Ramps>(2, 2, 1), TransformOptions{0.1, 0, 0}, 4,
                         DType::float64, Layout::nhwc),
      doctest::Contains("leaves no pixel"), Error);
}

TEST_CASE("transforms in a run: the model is built for the transformed images") {
  json config = json::parse(R"({
    "model": {"layers": [{"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [28, 28, 1], "classes": 3, "train_samples": 64,
                "test_samples": 16, "transform_central_crop": 0.875, "transform_resize": 12},
    "training": {"batch_size": 16, "epochs": 1},
    "output": {"progress": "none"}
  })");
  {
    Experiment e(make_experiment(config, {}, "test"), test::plugins());
    CHECK(e.dataset().sample_shape(Layout::nhwc) == Shape{12, 12, 1});
    CHECK(e.model().parameters()[0].value.numel() == 12 * 12 * 3);
    CHECK(e.run().epochs.size() == 1);
  }
  config["dataset"]["transform_resize"] = -2;
  CHECK_THROWS_WITH_AS(Experiment(make_experiment(config, {}, "test"), test::plugins()),
                       doctest::Contains("dataset.transform_resize"), Error);
  config["dataset"]["transform_resize"] = 0;
  config["dataset"]["input_shape"] = json::array({10});
  CHECK_THROWS_WITH_AS(Experiment(make_experiment(config, {}, "test"), test::plugins()),
                       doctest::Contains("need image samples"), Error);
}
