// identity's rule (identity.cpp): y = x, dy/dx = 1; for the CPU layer and its CUDA twin.
#pragma once
#include "host_device.hpp"

namespace dtnn::rules {

struct Identity {
  static constexpr const char* kType = "identity";
  template <class T>
  DTNN_HOST_DEVICE static T forward(T x) {
    return x;
  }
  template <class T>
  DTNN_HOST_DEVICE static T gradient(T, T) {
    return T(1);
  }
};

}  // namespace dtnn::rules
