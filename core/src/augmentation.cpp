#include "dtnn/augmentation.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/rng.hpp"
#include "image_view.hpp"

namespace dtnn {

namespace {

// What one sample draws. The flip and crop draws come first, from the sample's stream, as they
// always have; every other augmentation draws from a stream of its own, so that switching one on
// leaves the others' draws alone.
struct Draws {
  bool hflip = false, vflip = false;
  std::int64_t dy = 0, dx = 0;
  std::optional<double> angle, brightness, contrast, saturation, blur;
  struct Square {
    std::int64_t top, left, size;
  };
  std::optional<Square> mask;
  std::optional<std::array<double, 8>> perspective;  // output -> input pixel map
};

Draws draw(const AugmentOptions& o, std::uint64_t seed, std::int64_t id, std::int64_t h,
           std::int64_t w) {
  Draws d;
  const std::uint64_t sample = Rng::derive(seed, static_cast<std::uint64_t>(id));
  Rng rng(sample);
  d.hflip = rng.uniform() < o.horizontal_flip;
  const bool crop = rng.uniform() < o.random_crop;
  const std::int64_t pad = o.crop_padding;
  if (crop) {
    d.dy = static_cast<std::int64_t>(rng.uniform() * double(2 * pad + 1)) - pad;
    d.dx = static_cast<std::int64_t>(rng.uniform() * double(2 * pad + 1)) - pad;
  }
  // Stream k decides whether augmentation k happens and, if so, its strength.
  auto maybe = [&](std::uint64_t k, double probability) -> std::optional<Rng> {
    Rng r(Rng::derive(sample, k));
    if (probability > 0 && r.uniform() < probability) return r;
    return std::nullopt;
  };
  d.vflip = maybe(1, o.vertical_flip).has_value();
  if (auto r = maybe(2, o.rotate)) d.angle = r->uniform(-o.rotate_degrees, o.rotate_degrees);
  if (auto r = maybe(3, o.brightness)) d.brightness = r->uniform() * o.brightness_factor;
  if (auto r = maybe(4, o.contrast)) d.contrast = r->uniform() * o.contrast_factor;
  if (auto r = maybe(5, o.saturation)) d.saturation = r->uniform() * o.saturation_factor;
  if (maybe(6, o.blur)) d.blur = o.blur_size;
  if (auto r = maybe(7, o.mask)) {
    const std::int64_t m = std::min({o.mask_size, h, w});
    d.mask = Draws::Square{
        static_cast<std::int64_t>(r->below(static_cast<std::uint64_t>(h - m + 1))),
        static_cast<std::int64_t>(r->below(static_cast<std::uint64_t>(w - m + 1))), m};
  }
  if (auto r = maybe(8, o.perspective)) {
    const double p = r->uniform() * o.perspective_factor, right = double(w - 1),
                 bottom = double(h - 1);
    const double corners[4][2] = {{0, 0}, {right, 0}, {0, bottom}, {right, bottom}};
    double moved[4][2];
    for (int k = 0; k < 4; ++k) {
      const double ix = r->uniform(0, p) * right, iy = r->uniform(0, p) * bottom;  // inwards
      moved[k][0] = k % 2 == 0 ? ix : right - ix;
      moved[k][1] = k < 2 ? iy : bottom - iy;
    }
    d.perspective = homography(corners, moved);
  }
  return d;
}

// out(y, x) = in(vflip ? h-1-(y+dy) : y+dy, hflip ? w-1-(x+dx) : x+dx), zero outside.
template <class T>
void shift_and_flip(const ImageView<T>& img, const ImageView<T>& in, const Draws& d) {
  for (std::int64_t y = 0; y < img.h; ++y)
    for (std::int64_t x = 0; x < img.w; ++x) {
      const std::int64_t sy0 = y + d.dy, sx0 = x + d.dx;
      const bool inside = sy0 >= 0 && sy0 < img.h && sx0 >= 0 && sx0 < img.w;
      const std::int64_t sy = d.vflip ? img.h - 1 - sy0 : sy0;
      const std::int64_t sx = d.hflip ? img.w - 1 - sx0 : sx0;
      for (std::int64_t ch = 0; ch < img.c; ++ch)
        img.at(y, x, ch) = inside ? in.at(sy, sx, ch) : T(0);
    }
}

// out(y, x) = in(source(x, y)), bilinear, zero outside; source gives (sx, sy).
template <class T, class F>
void remap(const ImageView<T>& img, const ImageView<T>& in, F&& source) {
  auto value = [&](std::int64_t y, std::int64_t x, std::int64_t ch) {
    return y >= 0 && y < img.h && x >= 0 && x < img.w ? double(in.at(y, x, ch)) : 0.0;
  };
  for (std::int64_t y = 0; y < img.h; ++y)
    for (std::int64_t x = 0; x < img.w; ++x) {
      const auto [sx, sy] = source(double(x), double(y));
      const double fy = std::floor(sy), fx = std::floor(sx), wy = sy - fy, wx = sx - fx;
      const auto y0 = static_cast<std::int64_t>(fy), x0 = static_cast<std::int64_t>(fx);
      for (std::int64_t ch = 0; ch < img.c; ++ch)
        img.at(y, x, ch) = static_cast<T>(
            (1 - wy) * ((1 - wx) * value(y0, x0, ch) + wx * value(y0, x0 + 1, ch)) +
            wy * ((1 - wx) * value(y0 + 1, x0, ch) + wx * value(y0 + 1, x0 + 1, ch)));
    }
}

// Counter-clockwise by `degrees` about the centre.
template <class T>
void rotate(const ImageView<T>& img, const ImageView<T>& in, double degrees) {
  const double a = degrees * 3.14159265358979323846 / 180.0, cs = std::cos(a), sn = std::sin(a);
  const double cy = double(img.h - 1) / 2, cx = double(img.w - 1) / 2;
  remap(img, in, [&](double x, double y) {
    return std::pair{cx + cs * (x - cx) - sn * (y - cy), cy + sn * (x - cx) + cs * (y - cy)};
  });
}

template <class T>
void perspective(const ImageView<T>& img, const ImageView<T>& in, const std::array<double, 8>& m) {
  remap(img, in, [&](double x, double y) {
    const double d = m[6] * x + m[7] * y + 1;
    return std::pair{(m[0] * x + m[1] * y + m[2]) / d, (m[3] * x + m[4] * y + m[5]) / d};
  });
}

// m + f * (x - m), m each channel's mean.
template <class T>
void contrast(const ImageView<T>& img, double f) {
  for (std::int64_t ch = 0; ch < img.c; ++ch) {
    double mean = 0;
    for (std::int64_t y = 0; y < img.h; ++y)
      for (std::int64_t x = 0; x < img.w; ++x) mean += double(img.at(y, x, ch));
    mean /= double(img.h * img.w);
    for (std::int64_t y = 0; y < img.h; ++y)
      for (std::int64_t x = 0; x < img.w; ++x)
        img.at(y, x, ch) = static_cast<T>(mean + f * (double(img.at(y, x, ch)) - mean));
  }
}

// g + f * (x - g), g the pixel's grey level.
template <class T>
void saturate(const ImageView<T>& img, double f) {
  static constexpr double kLuma[3] = {0.299, 0.587, 0.114};
  for (std::int64_t y = 0; y < img.h; ++y)
    for (std::int64_t x = 0; x < img.w; ++x) {
      double grey = 0;
      for (std::int64_t ch = 0; ch < img.c; ++ch)
        grey += (img.c == 3 ? kLuma[ch] : 1.0 / double(img.c)) * double(img.at(y, x, ch));
      for (std::int64_t ch = 0; ch < img.c; ++ch)
        img.at(y, x, ch) = static_cast<T>(grey + f * (double(img.at(y, x, ch)) - grey));
    }
}

// Index i of a row of n, mirrored at the ends as scipy's "reflect" (d c b a | a b c d | d c b a).
std::int64_t reflect(std::int64_t i, std::int64_t n) {
  const std::int64_t period = 2 * n;
  i %= period;
  if (i < 0) i += period;
  return i < n ? i : period - 1 - i;
}

// Gaussian blur over height and width: along rows into `tmp`, then along columns back.
template <class T>
void blur(const ImageView<T>& img, const ImageView<T>& tmp, double sigma) {
  const auto radius = static_cast<std::int64_t>(std::lround(4.0 * sigma));
  thread_local std::vector<double> weights;  // grows once; a steady state does not allocate
  weights.resize(static_cast<std::size_t>(2 * radius + 1));
  double total = 0;
  for (std::int64_t k = -radius; k <= radius; ++k)
    total += weights[static_cast<std::size_t>(k + radius)] =
        sigma > 0 ? std::exp(-0.5 * double(k * k) / (sigma * sigma)) : double(k == 0);
  for (double& v : weights) v /= total;
  auto pass = [&](const ImageView<T>& from, const ImageView<T>& to, bool along_x) {
    for (std::int64_t y = 0; y < img.h; ++y)
      for (std::int64_t x = 0; x < img.w; ++x)
        for (std::int64_t ch = 0; ch < img.c; ++ch) {
          double sum = 0;
          for (std::int64_t k = -radius; k <= radius; ++k) {
            const double wk = weights[static_cast<std::size_t>(k + radius)];
            sum += wk * double(along_x ? from.at(y, reflect(x + k, img.w), ch)
                                       : from.at(reflect(y + k, img.h), x, ch));
          }
          to.at(y, x, ch) = static_cast<T>(sum);
        }
  };
  pass(img, tmp, true);
  pass(tmp, img, false);
}

}  // namespace

std::array<double, 8> homography(const double (&from)[4][2], const double (&to)[4][2]) {
  // Two equations per point pair, in the eight unknowns: solved by elimination with pivoting.
  double a[8][9] = {};
  for (int k = 0; k < 4; ++k) {
    const double x = from[k][0], y = from[k][1], u = to[k][0], v = to[k][1];
    const double rows[2][9] = {{x, y, 1, 0, 0, 0, -u * x, -u * y, u},
                               {0, 0, 0, x, y, 1, -v * x, -v * y, v}};
    for (int r = 0; r < 2; ++r) std::copy(rows[r], rows[r] + 9, a[2 * k + r]);
  }
  for (int col = 0; col < 8; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 8; ++r)
      if (std::abs(a[r][col]) > std::abs(a[pivot][col])) pivot = r;
    DTNN_CHECK(std::abs(a[pivot][col]) > 1e-12, "homography: three of the points are collinear");
    std::swap(a[col], a[pivot]);
    for (int r = 0; r < 8; ++r) {
      if (r == col) continue;
      const double f = a[r][col] / a[col][col];
      for (int k = col; k < 9; ++k) a[r][k] -= f * a[col][k];
    }
  }
  std::array<double, 8> h{};
  for (int i = 0; i < 8; ++i) h[static_cast<std::size_t>(i)] = a[i][8] / a[i][i];
  return h;
}

void augment(Tensor& x, std::span<const std::int64_t> ids, const AugmentOptions& o,
             std::uint64_t seed, Tensor& scratch) {
  if (!o.augments()) return;
  DTNN_CHECK(x.shape().rank() == 4, "augmentation needs image samples");
  const bool nhwc = x.layout() == Layout::nhwc;
  const std::int64_t h = nhwc ? x.dim(1) : x.dim(2), w = nhwc ? x.dim(2) : x.dim(3);
  const std::int64_t c = nhwc ? x.dim(3) : x.dim(1), size = h * w * c;
  DTNN_CHECK(scratch.numel() >= size * omp_get_max_threads(), "augmentation scratch too small");
  dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    parallel_for(static_cast<std::int64_t>(ids.size()), 1, [&](std::int64_t i) {
      const Draws d = draw(o, seed, ids[static_cast<std::size_t>(i)], h, w);
      const ImageView<T> img{x.data<T>() + i * size, h, w, c, nhwc};
      const ImageView<T> copy{scratch.data<T>() + omp_get_thread_num() * size, h, w, c, nhwc};
      if (d.hflip || d.vflip || d.dy != 0 || d.dx != 0) {
        std::copy(img.p, img.p + size, copy.p);
        shift_and_flip(img, copy, d);
      }
      if (d.angle) {
        std::copy(img.p, img.p + size, copy.p);
        rotate(img, copy, *d.angle);
      }
      if (d.perspective) {
        std::copy(img.p, img.p + size, copy.p);
        perspective(img, copy, *d.perspective);
      }
      if (d.brightness)
        for (std::int64_t k = 0; k < size; ++k) img.p[k] = static_cast<T>(img.p[k] * *d.brightness);
      if (d.contrast) contrast(img, *d.contrast);
      if (d.saturation) saturate(img, *d.saturation);
      if (d.blur) blur(img, copy, *d.blur);
      if (d.mask) {
        const Draws::Square& m = *d.mask;
        for (std::int64_t y = m.top; y < m.top + m.size; ++y)
          for (std::int64_t xx = m.left; xx < m.left + m.size; ++xx)
            for (std::int64_t ch = 0; ch < c; ++ch) img.at(y, xx, ch) = T(0);
      }
    });
  });
}

void normalize(Tensor& x, const AugmentOptions& o) {
  if (!o.normalizes()) return;
  const auto channels = static_cast<std::int64_t>(o.channel_mean.size());
  const bool nhwc = x.layout() == Layout::nhwc || x.shape().rank() < 4;
  const std::int64_t sample = x.numel() / std::max<std::int64_t>(x.dim(0), 1);
  if (channels > 0) {
    const std::int64_t c = nhwc ? x.dim(x.shape().rank() - 1) : x.dim(1);
    DTNN_CHECK(c == channels, "dataset: normalize_mean has " + std::to_string(channels) +
                                  " values, the samples have " + std::to_string(c) + " channels");
  }
  dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    T* p = x.data<T>();
    const T scale = static_cast<T>(o.normalize_scale), offset = static_cast<T>(o.normalize_offset);
    parallel_for(x.numel(), kParallelGrain, [&](std::int64_t i) {
      T v = p[i] * scale + offset;
      if (channels > 0) {
        const std::int64_t ch = nhwc ? i % channels : i % sample / (sample / channels);
        v = (v - static_cast<T>(o.channel_mean[static_cast<std::size_t>(ch)])) /
            static_cast<T>(o.channel_std[static_cast<std::size_t>(ch)]);
      }
      p[i] = v;
    });
  });
}

}  // namespace dtnn
