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

// n samples of an h x w x c image in float64, value f(y, x, ch) (never 0 unless f is).
template <class F>
Tensor picture(Layout layout, std::int64_t n, std::int64_t h, std::int64_t w, std::int64_t c, F f) {
  const Shape s = layout == Layout::nhwc ? Shape{n, h, w, c} : Shape{n, c, h, w};
  Tensor t = Tensor::empty(s, DType::float64, layout);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x)
        for (std::int64_t ch = 0; ch < c; ++ch)
          t.data<double>()[i * h * w * c +
                           (layout == Layout::nhwc ? (y * w + x) * c + ch : (ch * h + y) * w + x)] =
              f(y, x, ch);
  return t;
}
double at(const Tensor& t, std::int64_t i, std::int64_t y, std::int64_t x, std::int64_t ch) {
  const bool nhwc = t.layout() == Layout::nhwc;
  const std::int64_t h = nhwc ? t.dim(1) : t.dim(2), w = nhwc ? t.dim(2) : t.dim(3),
                     c = nhwc ? t.dim(3) : t.dim(1);
  return t.data<double>()[i * h * w * c + (nhwc ? (y * w + x) * c + ch : (ch * h + y) * w + x)];
}

// One 3x4 image with 2 channels: value (y, x, c) = 100 c + 10 y + x + 1 (never 0).
Tensor image(Layout layout, std::int64_t copies = 1) {
  return picture(layout, copies, 3, 4, 2, [](std::int64_t y, std::int64_t x, std::int64_t c) {
    return double(100 * c + 10 * y + x + 1);
  });
}

History run(json config) {
  config["output"] = {{"progress", "none"}};
  Experiment e(make_experiment(config, {}, "test"), test::plugins());
  return e.run();
}

}  // namespace

TEST_CASE("augment: a flip mirrors each row, a crop shifts the image, zeros coming in") {
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
        for (int c = 0; c < 2; ++c) CHECK(at(x, 0, y, xx, c) == 100 * c + 10 * y + (3 - xx) + 1);
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
                match = at(many, n, y, xx, c) == expected;
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
    flipped += at(a, n, 0, 0, 0) != 1;
    CHECK(at(a, n, 0, 0, 0) == at(b, n, 0, 0, 0));  // the same seed: the same draws
  }
  CHECK(flipped > 160);
  CHECK(flipped < 240);
  Tensor c = image(Layout::nhwc, 400);
  augment(c, ids, half, 6, scratch);  // another seed (epoch): other draws
  int differ = 0;
  for (std::int64_t n = 0; n < 400; ++n) differ += at(a, n, 0, 0, 0) != at(c, n, 0, 0, 0);
  CHECK(differ > 100);
}

namespace {
Tensor copy_of(const Tensor& t) {
  Tensor c = Tensor::empty(t.shape(), t.dtype(), t.layout());
  c.copy_from(t);
  return c;
}
std::vector<std::int64_t> first_ids(std::int64_t n) {
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}
}  // namespace

TEST_CASE("augment: vertical flip, brightness, contrast and saturation, exactly as documented") {
  const auto threads = std::max(1, omp_get_max_threads());
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(to_string(layout));
    auto f = [](std::int64_t y, std::int64_t x, std::int64_t ch) {
      return double(100 * ch + 10 * y + x + 1);
    };
    const Tensor in = picture(layout, 40, 5, 4, 3, f);
    Tensor scratch = Tensor::empty(Shape{60 * threads}, DType::float64);
    const auto ids = first_ids(40);
    AugmentOptions v;
    v.vertical_flip = 1.0;
    Tensor flipped = copy_of(in);
    augment(flipped, ids, v, 3, scratch);
    for (std::int64_t y = 0; y < 5; ++y)
      for (std::int64_t x = 0; x < 4; ++x)
        for (std::int64_t ch = 0; ch < 3; ++ch) CHECK(at(flipped, 7, y, x, ch) == f(4 - y, x, ch));

    // brightness: x * b, one b in [0, 2) per sample; over 40 samples they spread.
    AugmentOptions b;
    b.brightness = 1.0;
    b.brightness_factor = 2.0;
    Tensor bright = copy_of(in);
    augment(bright, ids, b, 3, scratch);
    double lo = 2, hi = 0;
    for (std::int64_t i = 0; i < 40; ++i) {
      const double factor = at(bright, i, 0, 0, 0) / at(in, i, 0, 0, 0);
      CHECK(factor >= 0.0);
      CHECK(factor < 2.0);
      lo = std::min(lo, factor);
      hi = std::max(hi, factor);
      CHECK(at(bright, i, 4, 3, 2) == doctest::Approx(factor * at(in, i, 4, 3, 2)));
    }
    CHECK(hi - lo > 1.0);

    // contrast: each channel keeps its mean; deviations from it scale by one factor.
    AugmentOptions c;
    c.contrast = 1.0;
    Tensor contrasted = copy_of(in);
    augment(contrasted, ids, c, 3, scratch);
    for (std::int64_t ch = 0; ch < 3; ++ch) {
      double mean_in = 0, mean_out = 0;
      for (std::int64_t y = 0; y < 5; ++y)
        for (std::int64_t x = 0; x < 4; ++x) {
          mean_in += at(in, 5, y, x, ch) / 20;
          mean_out += at(contrasted, 5, y, x, ch) / 20;
        }
      CHECK(mean_out == doctest::Approx(mean_in));
      const double factor =
          (at(contrasted, 5, 0, 0, ch) - mean_in) / (at(in, 5, 0, 0, ch) - mean_in);
      CHECK(factor >= 0.0);
      CHECK(factor < 1.0);
      CHECK(at(contrasted, 5, 3, 2, ch) - mean_in ==
            doctest::Approx(factor * (at(in, 5, 3, 2, ch) - mean_in)));
    }

    // saturation: every pixel keeps its luma; the channels move towards it by one factor.
    AugmentOptions s;
    s.saturation = 1.0;
    Tensor saturated = copy_of(in);
    augment(saturated, ids, s, 3, scratch);
    auto luma = [](const Tensor& t, std::int64_t i, std::int64_t y, std::int64_t x) {
      return 0.299 * at(t, i, y, x, 0) + 0.587 * at(t, i, y, x, 1) + 0.114 * at(t, i, y, x, 2);
    };
    const double g = luma(in, 9, 2, 1);
    const double factor = (at(saturated, 9, 2, 1, 0) - g) / (at(in, 9, 2, 1, 0) - g);
    CHECK(factor >= 0.0);
    CHECK(factor < 1.0);
    for (std::int64_t y = 0; y < 5; ++y)
      for (std::int64_t x = 0; x < 4; ++x) {
        CHECK(luma(saturated, 9, y, x) == doctest::Approx(luma(in, 9, y, x)));
        CHECK(at(saturated, 9, y, x, 2) - luma(in, 9, y, x) ==
              doctest::Approx(factor * (at(in, 9, y, x, 2) - luma(in, 9, y, x))));
      }
  }
}

TEST_CASE("augment: blur, cutout mask and rotation") {
  const auto threads = std::max(1, omp_get_max_threads());
  Tensor scratch = Tensor::empty(Shape{15 * 15 * 2 * threads}, DType::float64);
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(to_string(layout));
    // Blur, sigma 1 (radius 4): an impulse becomes the outer product of the normalised Gaussian;
    // a constant image stays constant (mirrored borders).
    AugmentOptions b;
    b.blur = 1.0;
    b.blur_size = 1.0;
    Tensor impulse = picture(layout, 1, 15, 15, 2,
                             [](auto y, auto x, auto) { return y == 7 && x == 7 ? 1.0 : 0.0; });
    Tensor flat =
        picture(layout, 1, 15, 15, 2, [](auto, auto, auto ch) { return 3.0 + double(ch); });
    augment(impulse, first_ids(1), b, 1, scratch);
    augment(flat, first_ids(1), b, 1, scratch);
    double norm = 0;
    for (int k = -4; k <= 4; ++k) norm += std::exp(-0.5 * k * k);
    auto g = [&](int k) { return std::abs(k) <= 4 ? std::exp(-0.5 * k * k) / norm : 0.0; };
    for (int y = 0; y < 15; ++y)
      for (int x = 0; x < 15; ++x) {
        CHECK(at(impulse, 0, y, x, 1) == doctest::Approx(g(y - 7) * g(x - 7)));
        CHECK(at(flat, 0, y, x, 1) == doctest::Approx(4.0));
      }

    // Mask: one 2x2 square of zeros per sample, the rest untouched; over samples it moves.
    AugmentOptions m;
    m.mask = 1.0;
    m.mask_size = 2;
    auto f = [](std::int64_t y, std::int64_t x, std::int64_t ch) {
      return double(100 * ch + 10 * y + x + 1);
    };
    Tensor masked = picture(layout, 30, 4, 5, 2, f);
    augment(masked, first_ids(30), m, 1, scratch);
    std::set<std::pair<std::int64_t, std::int64_t>> corners;
    for (std::int64_t i = 0; i < 30; ++i) {
      std::int64_t zeros = 0, top = 9, left = 9;
      for (std::int64_t y = 0; y < 4; ++y)
        for (std::int64_t x = 0; x < 5; ++x) {
          const bool zero = at(masked, i, y, x, 0) == 0;
          CHECK(at(masked, i, y, x, 1) == (zero ? 0.0 : f(y, x, 1)));
          if (zero) {
            ++zeros;
            top = std::min(top, y);
            left = std::min(left, x);
          }
        }
      CHECK(zeros == 4);
      for (std::int64_t y = top; y < top + 2; ++y)
        for (std::int64_t x = left; x < left + 2; ++x) CHECK(at(masked, i, y, x, 0) == 0);
      corners.insert({top, left});
    }
    CHECK(corners.size() > 4);

    // Rotation: 0 degrees is the identity; any angle keeps a radially symmetric image (up to
    // interpolation) in the disc that stays inside; and a lopsided image does change.
    AugmentOptions r;
    r.rotate = 1.0;
    r.rotate_degrees = 0.0;
    Tensor same = picture(layout, 2, 4, 5, 2, f);
    augment(same, first_ids(2), r, 1, scratch);
    CHECK(at(same, 1, 2, 3, 1) == f(2, 3, 1));
    r.rotate_degrees = 90.0;
    auto radial = [](std::int64_t y, std::int64_t x, std::int64_t) {
      return double((y - 7) * (y - 7) + (x - 7) * (x - 7));
    };
    Tensor disc = picture(layout, 8, 15, 15, 1, radial);
    Tensor lopsided =
        picture(layout, 8, 15, 15, 1, [](auto y, auto x, auto) { return double(x + 100 * y); });
    Tensor scratch1 = Tensor::empty(Shape{15 * 15 * threads}, DType::float64);
    augment(disc, first_ids(8), r, 1, scratch1);
    augment(lopsided, first_ids(8), r, 1, scratch1);
    int changed = 0;
    for (std::int64_t i = 0; i < 8; ++i) {
      for (std::int64_t y = 3; y <= 11; ++y)
        for (std::int64_t x = 3; x <= 11; ++x)
          if (radial(y, x, 0) <= 16) CHECK(std::abs(at(disc, i, y, x, 0) - radial(y, x, 0)) <= 0.5);
      changed += std::abs(at(lopsided, i, 3, 7, 0) - double(7 + 100 * 3)) > 5;
      CHECK(at(lopsided, i, 7, 7, 0) == doctest::Approx(7.0 + 700.0));  // the centre stays
    }
    CHECK(changed >= 6);
  }
}

TEST_CASE("augment: perspective is a projective map of the image onto a quadrilateral inside it") {
  const double from[4][2] = {{0, 0}, {9, 0}, {0, 5}, {9, 5}};
  const double to[4][2] = {{1, 0.5}, {8, 1}, {0.5, 4}, {8.5, 4.5}};
  const auto h = homography(from, to);
  auto map = [&](double x, double y) {
    const double d = h[6] * x + h[7] * y + 1;
    return std::pair{(h[0] * x + h[1] * y + h[2]) / d, (h[3] * x + h[4] * y + h[5]) / d};
  };
  for (int k = 0; k < 4; ++k) {
    CHECK(map(from[k][0], from[k][1]).first == doctest::Approx(to[k][0]));
    CHECK(map(from[k][0], from[k][1]).second == doctest::Approx(to[k][1]));
  }
  const double line[4][2] = {{0, 0}, {1, 1}, {2, 2}, {3, 0}};
  CHECK_THROWS_WITH_AS(homography(line, to), doctest::Contains("collinear"), Error);

  // Channel 0 holds x, channel 1 holds y: bilinear sampling returns the source point itself.
  const auto threads = std::max(1, omp_get_max_threads());
  Tensor scratch = Tensor::empty(Shape{11 * 9 * 2 * threads}, DType::float64);
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(to_string(layout));
    auto coords = [](std::int64_t y, std::int64_t x, std::int64_t ch) {
      return double(ch == 0 ? x : y);
    };
    AugmentOptions p;
    p.perspective = 1.0;
    p.perspective_factor = 0.0;
    Tensor same = picture(layout, 1, 9, 11, 2, coords);
    augment(same, first_ids(1), p, 1, scratch);
    CHECK(at(same, 0, 4, 7, 0) == doctest::Approx(7.0));
    CHECK(at(same, 0, 4, 7, 1) == doctest::Approx(4.0));
    p.perspective_factor = 0.3;
    Tensor moved = picture(layout, 20, 9, 11, 2, coords);
    augment(moved, first_ids(20), p, 1, scratch);
    int distorted = 0;
    for (std::int64_t i = 0; i < 20; ++i) {
      auto point = [&](std::int64_t y, std::int64_t x) {
        return std::pair{at(moved, i, y, x, 0), at(moved, i, y, x, 1)};
      };
      // Each output corner comes from within 30% of the width and height of its own corner.
      const auto [u0, v0] = point(0, 0);
      const auto [u1, v1] = point(8, 10);
      CHECK(u0 >= 0);
      CHECK(u0 <= 3.0 + 1e-9);
      CHECK(v0 >= 0);
      CHECK(v0 <= 2.4 + 1e-9);
      CHECK(u1 >= 7.0 - 1e-9);
      CHECK(v1 >= 5.6 - 1e-9);
      // The top row's points lie on the line between its two corners' source points.
      const auto [ua, va] = point(0, 10);
      const auto [um, vm] = point(0, 4);
      CHECK((ua - u0) * (vm - v0) - (va - v0) * (um - u0) == doctest::Approx(0.0).epsilon(1e-9));
      distorted += std::abs(u0) + std::abs(v0) > 0.2;
    }
    CHECK(distorted > 10);
  }
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
  CHECK(test::error_of([&] {
          run(bad);
        }).find("dataset.augment_horizontal_flip: expected a probability") != std::string::npos);
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
          CHECK(at(x, 0, y, xx, c) == doctest::Approx((v - o.channel_mean[c]) / o.channel_std[c]));
        }
  }
  json bad = json::parse(R"({
    "model": {"layers": [{"type": "flatten"}, {"type": "fc", "units": 3}, {"type": "softmax"}]},
    "dataset": {"name": "synthetic", "input_shape": [4, 4, 2], "classes": 3, "normalize_mean": [0, 0],
                "normalize_std": [1]}})");
  CHECK(test::error_of([&] {
          run(bad);
        }).find("dataset.normalize_std: expected as many positive numbers") != std::string::npos);
  bad["dataset"]["normalize_mean"] = {0, 0, 0};
  bad["dataset"]["normalize_std"] = {1, 1, 1};
  CHECK(test::error_of([&] {
          run(bad);
        }).find("dataset.normalize_mean: 3 values, but the samples (4, 4, 2) have 2 channels") !=
        std::string::npos);
}
