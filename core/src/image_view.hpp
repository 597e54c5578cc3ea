// ImageView: one image sample of h x w pixels and c channels, in either layout, addressed by
// (row, column, channel). Internal to the core's image code (augmentation, transforms).
#pragma once
#include <cstdint>

namespace dtnn {

template <class T>
struct ImageView {
  T* p;
  std::int64_t h, w, c;
  bool nhwc;
  T& at(std::int64_t y, std::int64_t x, std::int64_t ch) const {
    return p[nhwc ? (y * w + x) * c + ch : (ch * h + y) * w + x];
  }
  std::int64_t size() const { return h * w * c; }
};

}  // namespace dtnn
