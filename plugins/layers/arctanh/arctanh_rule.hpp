// arctanh's rule (arctanh.cpp): y = artanh(x), dy/dx = 1 / (1 - x^2); for the CPU layer and its
// CUDA twin.
#pragma once
#include "host_device.hpp"

namespace dtnn::rules {

struct Arctanh {
  static constexpr const char* kType = "arctanh";
  template <class T>
  DTNN_HOST_DEVICE static T forward(T x) {
    return hd::atanh(x);
  }
  template <class T>
  DTNN_HOST_DEVICE static T gradient(T x, T) {
    return T(1) / ((T(1) - x) * (T(1) + x));
  }
};

}  // namespace dtnn::rules
