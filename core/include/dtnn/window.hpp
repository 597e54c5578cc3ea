// Window2d: the geometry of a pooling window over one image, in either layout.
// Input per sample: NHWC {H, W, C} or NCHW {C, H, W}; output likewise with Ho, Wo.
#pragma once
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/image_shape.hpp"
#include "dtnn/params.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

struct Window2d {
  std::int64_t h = 0, w = 0, c = 0;  // input
  std::int64_t ph = 2, pw = 2;       // pool size
  std::int64_t sh = 2, sw = 2;       // stride
  std::int64_t pad_h = 0, pad_w = 0;
  Layout layout = Layout::nhwc;

  std::int64_t ho() const { return (h + 2 * pad_h - ph) / sh + 1; }
  std::int64_t wo() const { return (w + 2 * pad_w - pw) / sw + 1; }
  // Offsets within one sample of element (y, x, channel), for input (h, w) or output (ho, wo).
  std::int64_t in_at(std::int64_t y, std::int64_t x, std::int64_t ch) const {
    return layout == Layout::nhwc ? (y * w + x) * c + ch : (ch * h + y) * w + x;
  }
  std::int64_t out_at(std::int64_t y, std::int64_t x, std::int64_t ch) const {
    return layout == Layout::nhwc ? (y * wo() + x) * c + ch : (ch * ho() + y) * wo() + x;
  }
  Shape out_shape() const { return image_shape(ho(), wo(), c, layout); }
  std::string str() const {
    return "pool=(" + std::to_string(ph) + "," + std::to_string(pw) + ") stride=(" +
           std::to_string(sh) + "," + std::to_string(sw) + ") padding=(" + std::to_string(pad_h) +
           "," + std::to_string(pad_w) + ")";
  }

  // From {"pool": 2 | [2, 2] (0: the whole dimension), "stride": 0 (= pool) | [..], "padding":
  // 0 | [..]} and the input shape.
  static Window2d from(const Params& p, const Shape& input, Layout layout) {
    const ImageShape image = image_of(input, layout, "");
    Window2d g;
    g.layout = layout;
    g.h = image.h;
    g.w = image.w;
    g.c = image.c;
    std::tie(g.ph, g.pw) = p.get_pair("pool", 0);
    if (g.ph == 0) g.ph = g.h;  // 0: the whole dimension (global pooling)
    if (g.pw == 0) g.pw = g.w;
    std::tie(g.sh, g.sw) = p.get_pair("stride", 0);
    std::tie(g.pad_h, g.pad_w) = p.get_pair("padding", 0);
    if (g.sh == 0) g.sh = g.ph;
    if (g.sw == 0) g.sw = g.pw;
    if (g.pad_h >= g.ph || g.pad_w >= g.pw) p.fail("padding", "padding smaller than the pool size");
    // A window must fit the padded input at least once (ho() alone would round a negative span
    // toward zero and give 1).
    if (g.h + 2 * g.pad_h < g.ph || g.w + 2 * g.pad_w < g.pw || g.ho() < 1 || g.wo() < 1)
      throw Error("pool " + g.str() + " larger than the input " + input.str());
    return g;
  }
};

}  // namespace dtnn
