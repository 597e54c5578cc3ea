// log's rule (log.cpp): y = ln(x), dy/dx = 1 / x; for the CPU layer and its CUDA twin.
#pragma once
#include "host_device.hpp"

namespace dtnn::rules {

struct Log {
  static constexpr const char* kType = "log";
  template <class T>
  DTNN_HOST_DEVICE static T forward(T x) {
    return hd::log(x);
  }
  template <class T>
  DTNN_HOST_DEVICE static T gradient(T x, T) {
    return T(1) / x;
  }
};

}  // namespace dtnn::rules
