// What lets one element-wise rule (an activation's forward and gradient) serve a CPU layer and its
// CUDA twin: DTNN_HOST_DEVICE marks its functions for both compilers, and dtnn::hd's math calls
// std:: on the host (the CPU layer's arithmetic, unchanged) and CUDA's own functions on the GPU.
#pragma once
#include <cmath>

#ifdef __CUDACC__
#define DTNN_HOST_DEVICE __host__ __device__
#else
#define DTNN_HOST_DEVICE
#endif

namespace dtnn::hd {

#ifdef __CUDA_ARCH__
#define DTNN_HD_MATH(name)        \
  template <class T>              \
  __device__ inline T name(T x) { \
    return ::name(x);             \
  }
#else
#define DTNN_HD_MATH(name) \
  template <class T>       \
  inline T name(T x) {     \
    return std::name(x);   \
  }
#endif
DTNN_HD_MATH(log)
DTNN_HD_MATH(log1p)
DTNN_HD_MATH(exp)
DTNN_HD_MATH(expm1)
DTNN_HD_MATH(fabs)
DTNN_HD_MATH(atanh)
#undef DTNN_HD_MATH

}  // namespace dtnn::hd
