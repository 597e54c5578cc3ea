#include "dtnn/loss_scale.hpp"

#include <algorithm>

namespace dtnn {

namespace {
// The scale never drops below 1: below it the scaling would shrink gradients (fp16 underflow),
// and a step that overflows at scale 1 overflows in float32 terms too.
constexpr double kSmallest = 1.0;
// Nor grows past 2^24: with fp16's largest value 65504 any gradient times more would overflow.
constexpr double kLargest = 16777216.0;
}  // namespace

LossScale::LossScale(const LossScaleOptions& options)
    : options_(options), scale_(options.initial), good_steps_(options.good_steps) {}

bool LossScale::update(bool gradients_finite) {
  if (!options_.enabled) return gradients_finite;
  if (!gradients_finite) {
    ++overflows_;
    good_steps_ = 0;
    if (options_.dynamic) scale_ = std::max(kSmallest, scale_ / 2);
    return false;
  }
  if (options_.dynamic && ++good_steps_ >= options_.growth_interval) {
    scale_ = std::min(kLargest, scale_ * 2);
    good_steps_ = 0;
  }
  return true;
}

}  // namespace dtnn
