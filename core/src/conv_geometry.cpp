#include <string>

#include "dtnn/conv_algorithm.hpp"

namespace dtnn {

Shape ConvGeometry::x_shape(std::int64_t batch) const {
  return layout == Layout::nhwc ? Shape{batch, h, w, c} : Shape{batch, c, h, w};
}
Shape ConvGeometry::w_shape() const {
  return layout == Layout::nhwc ? Shape{kh, kw, c, k} : Shape{k, c, kh, kw};
}
Shape ConvGeometry::y_shape(std::int64_t batch) const {
  return layout == Layout::nhwc ? Shape{batch, ho(), wo(), k} : Shape{batch, k, ho(), wo()};
}

std::string ConvGeometry::str() const {
  auto s = [](std::int64_t v) { return std::to_string(v); };
  return "x=" + x_shape(n).str() + " w=" + w_shape().str() + " stride=(" + s(stride_h) + "," +
         s(stride_w) + ") pad=(" + s(pad_h) + "," + s(pad_w) + ") dil=(" + s(dilation_h) + "," +
         s(dilation_w) + ") " + to_string(dtype) + " " + to_string(layout);
}

}  // namespace dtnn
