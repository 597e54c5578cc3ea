#include "dtnn/augmentation.hpp"

#include <omp.h>

#include <algorithm>

#include "dtnn/error.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/rng.hpp"

namespace dtnn {

void augment(Tensor& x, std::span<const std::int64_t> ids, const AugmentOptions& o,
             std::uint64_t seed, Tensor& scratch) {
  if (!o.augments()) return;
  DTNN_CHECK(x.shape().rank() == 4, "augmentation needs image samples");
  const bool nhwc = x.layout() == Layout::nhwc;
  const std::int64_t h = nhwc ? x.dim(1) : x.dim(2), w = nhwc ? x.dim(2) : x.dim(3);
  const std::int64_t c = nhwc ? x.dim(3) : x.dim(1), size = h * w * c;
  DTNN_CHECK(scratch.numel() >= size * omp_get_max_threads(), "augmentation scratch too small");
  // Element (y, x, channel) of a sample.
  auto at = [&](std::int64_t yy, std::int64_t xx, std::int64_t ch) {
    return nhwc ? (yy * w + xx) * c + ch : (ch * h + yy) * w + xx;
  };
  dispatch_dtype(x.dtype(), [&](auto z) {
    using T = decltype(z);
    parallel_for(static_cast<std::int64_t>(ids.size()), 1, [&](std::int64_t i) {
      Rng rng(Rng::derive(seed, static_cast<std::uint64_t>(ids[static_cast<std::size_t>(i)])));
      const bool flip = rng.uniform() < o.horizontal_flip;
      const bool crop = rng.uniform() < o.random_crop;
      const std::int64_t pad = o.crop_padding;
      const std::int64_t dy = crop ? static_cast<std::int64_t>(rng.uniform() * double(2 * pad + 1)) - pad : 0;
      const std::int64_t dx = crop ? static_cast<std::int64_t>(rng.uniform() * double(2 * pad + 1)) - pad : 0;
      if (!flip && dy == 0 && dx == 0) return;
      T* sample = x.data<T>() + i * size;
      T* copy = scratch.data<T>() + omp_get_thread_num() * size;
      std::copy(sample, sample + size, copy);
      // out(y, x) = in(y + dy, flip ? w - 1 - (x + dx) : x + dx), zero outside.
      for (std::int64_t yy = 0; yy < h; ++yy)
        for (std::int64_t xx = 0; xx < w; ++xx) {
          const std::int64_t sy = yy + dy, sx0 = xx + dx;
          const std::int64_t sx = flip ? w - 1 - sx0 : sx0;
          const bool inside = sy >= 0 && sy < h && sx0 >= 0 && sx0 < w;
          for (std::int64_t ch = 0; ch < c; ++ch)
            sample[at(yy, xx, ch)] = inside ? copy[at(sy, sx, ch)] : T(0);
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
