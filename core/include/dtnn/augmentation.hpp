// Training-data augmentation and normalisation, applied to a batch after the dataset has read it
// (PyDTNN's data options, for every dataset):
//   horizontal_flip  probability that a sample is mirrored left to right
//   random_crop      probability that a sample is shifted by up to crop_padding pixels in each
//                    direction, what comes in from outside being zero (the "pad, then crop at a
//                    random place" augmentation of CIFAR training)
//   normalize        x * scale + offset on every value, then (x - mean[c]) / std[c] per channel
//                    when means are given; every split
// Each sample's draws are a function of the seed and its index, so a run is reproducible and the
// ranks of a data-parallel run augment alike.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

struct AugmentOptions {
  double horizontal_flip = 0.0;
  double random_crop = 0.0;
  std::int64_t crop_padding = 4;
  double normalize_scale = 1.0, normalize_offset = 0.0;
  std::vector<double> channel_mean, channel_std;  // empty, or one per channel

  bool augments() const { return horizontal_flip > 0 || random_crop > 0; }
  bool normalizes() const {
    return normalize_scale != 1.0 || normalize_offset != 0.0 || !channel_mean.empty();
  }
};

// Augments the image samples of x ([n, H, W, C] or [n, C, H, W]; sample i is ids[i]) in place.
// scratch holds at least one sample per thread (threads x H x W x C values of x's dtype).
DTNN_CORE_EXPORT void augment(Tensor& x, std::span<const std::int64_t> ids,
                              const AugmentOptions& options, std::uint64_t seed, Tensor& scratch);
// x = x * normalize_scale + normalize_offset, then standardised per channel (channels: the last
// dimension in NHWC, the second in NCHW; flat samples count as one channel per value).
DTNN_CORE_EXPORT void normalize(Tensor& x, const AugmentOptions& options);

}  // namespace dtnn
