// log_sigmoid's rule (log_sigmoid.cpp): y = min(x, 0) - log(1 + exp(-|x|)),
// dy/dx = 1 - exp(y); for the CPU layer and its CUDA twin.
#pragma once
#include "host_device.hpp"

namespace dtnn::rules {

struct LogSigmoid {
  static constexpr const char* kType = "log_sigmoid";
  template <class T>
  DTNN_HOST_DEVICE static T forward(T x) {
    return (x < T(0) ? x : T(0)) - hd::log1p(hd::exp(-hd::fabs(x)));
  }
  template <class T>
  DTNN_HOST_DEVICE static T gradient(T, T y) {
    return -hd::expm1(y);  // 1 - exp(y), exact near y = 0
  }
};

}  // namespace dtnn::rules
