// scalar's rule (scalar.cpp): y = scale * x, dy/dx = scale; for the CPU layer and its CUDA twin.
#pragma once
#include <cmath>

#include "dtnn/params.hpp"
#include "host_device.hpp"

namespace dtnn::rules {

struct Scalar {
  static constexpr const char* kType = "scalar";
  static constexpr const char* kParameters = R"({"scale": 1.0})";  // both plugins declare
  double scale = 1;
  template <class T>
  DTNN_HOST_DEVICE T forward(T x) const {
    return static_cast<T>(scale) * x;
  }
  template <class T>
  DTNN_HOST_DEVICE T gradient(T, T) const {
    return static_cast<T>(scale);
  }
  // The rule of a layer's parameters ("scale", finite).
  static Scalar of(const Params& p) {
    Scalar op;
    op.scale = p.get_double("scale");
    if (!std::isfinite(op.scale)) p.fail("scale", "a finite number");
    return op;
  }
};

}  // namespace dtnn::rules
