#include <algorithm>
#include <string>
#include <tuple>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/params.hpp"
#include "dtnn/registry.hpp"

namespace dtnn {

void ConvGeometry::read_window(const Params& p) {
  std::tie(kh, kw) = p.get_pair("kernel", 1);
  std::tie(stride_h, stride_w) = p.get_pair("stride", 1);
  std::tie(pad_h, pad_w) = p.get_pair("padding", 0);
  std::tie(dilation_h, dilation_w) = p.get_pair("dilation", 1);
}

std::string ConvGeometry::window_str() const {
  auto s = [](std::int64_t v) { return std::to_string(v); };
  return "kernel=(" + s(kh) + "," + s(kw) + ") padding=(" + s(pad_h) + "," + s(pad_w) +
         ") stride=(" + s(stride_h) + "," + s(stride_w) + ") dilation=(" + s(dilation_h) + "," +
         s(dilation_w) + ")" + (groups > 1 ? " groups=" + s(groups) : "");
}

Shape ConvGeometry::x_shape(std::int64_t batch) const {
  return layout == Layout::nhwc ? Shape{batch, h, w, c} : Shape{batch, c, h, w};
}
Shape ConvGeometry::w_shape() const {
  const std::int64_t per_group = c / groups;  // input channels each filter reads
  return layout == Layout::nhwc ? Shape{kh, kw, per_group, k} : Shape{k, per_group, kh, kw};
}
Shape ConvGeometry::y_shape(std::int64_t batch) const {
  return layout == Layout::nhwc ? Shape{batch, ho(), wo(), k} : Shape{batch, k, ho(), wo()};
}

std::string ConvGeometry::str() const {
  auto s = [](std::int64_t v) { return std::to_string(v); };
  return "x=" + x_shape(n).str() + " w=" + w_shape().str() + " stride=(" + s(stride_h) + "," +
         s(stride_w) + ") pad=(" + s(pad_h) + "," + s(pad_w) + ") dil=(" + s(dilation_h) + "," +
         s(dilation_w) + ")" + (groups > 1 ? " groups=" + s(groups) : "") + " " + to_string(dtype) +
         " " + to_string(layout) +
         (precision != Precision::fp32 ? std::string(" products ") + dtnn::to_string(precision)
                                       : "");
}

bool takes_groups(const Registry& registry, const std::string& name) {
  const PluginRecord* record = registry.find("conv", name);
  return record && record->traits.groups;
}

bool takes_precision(const Registry& registry, const std::string& name, Precision p) {
  if (p == Precision::fp32) return true;
  const PluginRecord* record = registry.find("conv", name);
  return record && std::find(record->traits.precisions.begin(), record->traits.precisions.end(),
                             p) != record->traits.precisions.end();
}

}  // namespace dtnn
