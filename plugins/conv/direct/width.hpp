// The vectors direct's engines are compiled with, and the inline namespace that keeps two widths
// apart in one plugin. The avx512 build compiles the engines twice: with the AVX-512 variant's
// usual 32-byte vectors (direct.cpp) and with 64-byte ones (direct_wide.cpp, DTNN_DIRECT_WIDE),
// the latter taken where dtnn/vector_width.hpp finds the CPU running 512-bit multiply-adds at full
// rate. The inline namespace gives each width's classes and kernels their own names, so the two
// translation units never share a definition that differs.
#pragma once
#include "dtnn/simd.hpp"

#if defined(DTNN_DIRECT_WIDE)
#define DTNN_DIRECT_WIDTH wide
#else
#define DTNN_DIRECT_WIDTH narrow
#endif

namespace dtnn::direct {
inline namespace DTNN_DIRECT_WIDTH {

#if defined(DTNN_DIRECT_WIDE)
inline constexpr int kBytes = 64;
#else
inline constexpr int kBytes = simd::kVectorBytes;
#endif

template <class T>
using Vec = simd::Vec<T, kBytes>;
template <class T>
inline constexpr int kLanes = simd::kLanes<T, kBytes>;

template <class T>
[[gnu::always_inline]] inline Vec<T> vload(const T* p) {
  return simd::load<T, kBytes>(p);
}
template <class T>
[[gnu::always_inline]] inline void vstore(T* p, const Vec<T>& v) {
  simd::store<T, kBytes>(p, v);
}

}  // namespace DTNN_DIRECT_WIDTH
}  // namespace dtnn::direct
