// Training-data augmentation and normalisation, applied to a batch after the dataset has read it
// (PyDTNN's data options, for every dataset). Each augmentation happens to a sample with its
// probability; its strength is drawn per sample:
//   horizontal_flip, vertical_flip  mirror left to right / top to bottom
//   random_crop      shift by up to crop_padding pixels in each direction, what comes in from
//                    outside being zero (the "pad, then crop at a random place" of CIFAR training)
//   rotate           turn about the centre by an angle uniform in [-rotate_degrees,
//                    rotate_degrees], bilinear, zero outside (PyDTNN: PIL's nearest neighbour)
//   brightness       x * f, f uniform in [0, brightness_factor) (PIL's Brightness, as PyDTNN;
//                    dtnn neither clips to [0, 1] nor rounds to 8 bits, as its inputs may be
//                    standardised already)
//   contrast         m + f * (x - m), m the channel's mean, f uniform in [0, contrast_factor)
//   saturation       g + f * (x - g), g the pixel's grey level (ITU-R 601 luma for 3 channels, the
//                    mean of the channels otherwise), f uniform in [0, saturation_factor). PyDTNN
//                    applies PIL's Color to each channel alone, which leaves it unchanged.
//   blur             Gaussian of standard deviation blur_size pixels over height and width,
//                    radius round(4 sigma), borders mirrored (scipy's gaussian_filter, as PyDTNN)
//   perspective      show the quadrilateral whose corners are the image's corners moved inwards by
//                    up to p of the width and height, p uniform in [0, perspective_factor)
//                    (PyDTNN's corner jitter), stretched over the image: a projective map,
//                    bilinear, zero outside
//   mask             zero a mask_size x mask_size square at a random place (cutout; PyDTNN's
//                    mask zeroes two corner regions and rolls the image)
//   normalize        x * scale + offset on every value, then (x - mean[c]) / std[c] per channel
//                    when means are given; every split
// Each sample's draws are a function of the seed and its index, so a run is reproducible and the
// ranks of a data-parallel run augment alike.
#pragma once
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

struct AugmentOptions {
  double horizontal_flip = 0.0, vertical_flip = 0.0;  // probabilities
  double random_crop = 0.0;
  std::int64_t crop_padding = 4;
  double rotate = 0.0, rotate_degrees = 90.0;  // PyDTNN's defaults for the strengths
  double brightness = 0.0, brightness_factor = 1.0;
  double contrast = 0.0, contrast_factor = 1.0;
  double saturation = 0.0, saturation_factor = 1.0;
  double blur = 0.0, blur_size = 16.0;
  double mask = 0.0;
  std::int64_t mask_size = 16;
  double perspective = 0.0, perspective_factor = 0.25;
  double normalize_scale = 1.0, normalize_offset = 0.0;
  std::vector<double> channel_mean, channel_std;  // empty, or one per channel

  bool augments() const {
    return horizontal_flip > 0 || vertical_flip > 0 || random_crop > 0 || rotate > 0 ||
           brightness > 0 || contrast > 0 || saturation > 0 || blur > 0 || mask > 0 ||
           perspective > 0;
  }
  bool normalizes() const {
    return normalize_scale != 1.0 || normalize_offset != 0.0 || !channel_mean.empty();
  }
};

// Augments the image samples of x ([n, H, W, C] or [n, C, H, W]; sample i is ids[i]) in place.
// scratch holds at least one sample per thread (threads x H x W x C values of x's dtype).
// Samples that draw no augmentation are not touched.
DTNN_CORE_EXPORT void augment(Tensor& x, std::span<const std::int64_t> ids,
                              const AugmentOptions& options, std::uint64_t seed, Tensor& scratch);
// The projective map taking from[i] to to[i] (i < 4, points (x, y), no three collinear):
// (x, y) -> ((h0 x + h1 y + h2) / d, (h3 x + h4 y + h5) / d), d = h6 x + h7 y + 1.
DTNN_CORE_EXPORT std::array<double, 8> homography(const double (&from)[4][2],
                                                  const double (&to)[4][2]);
// x = x * normalize_scale + normalize_offset, then standardised per channel (channels: the last
// dimension in NHWC, the second in NCHW; flat samples count as one channel per value).
DTNN_CORE_EXPORT void normalize(Tensor& x, const AugmentOptions& options);

}  // namespace dtnn
