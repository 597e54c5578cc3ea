// An image's per-sample shape in either layout: NHWC {H, W, C}, NCHW {C, H, W}. The layers that
// take images (convolutions, pools, resizers, patch cutters) read their input through image_of and
// write their output through image_shape, so the layout's axis order is spelled once.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

struct ImageShape {
  std::int64_t h = 0, w = 0, c = 0;
  std::int64_t pixels() const { return h * w; }
};

// The per-sample shape of an h x w image of c channels in `layout`.
inline Shape image_shape(std::int64_t h, std::int64_t w, std::int64_t c, Layout layout) {
  return layout == Layout::nhwc ? Shape{h, w, c} : Shape{c, h, w};
}

// The image a per-sample shape `s` holds in `layout`; an Error naming `who` (the layer) when `s`
// is not an image.
inline ImageShape image_of(const Shape& s, Layout layout, const std::string& who) {
  if (s.rank() != 3)
    throw Error(who + (who.empty() ? "" : " ") + "expects image input (H, W, C), got " + s.str());
  return layout == Layout::nhwc ? ImageShape{s[0], s[1], s[2]} : ImageShape{s[1], s[2], s[0]};
}

}  // namespace dtnn
