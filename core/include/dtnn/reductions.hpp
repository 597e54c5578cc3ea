// Sums, dot products and maxima of contiguous float or double arrays in vector lanes. A plain
// loop `s += x[i]` stays scalar without -ffast-math (the compiler keeps the order of float
// additions), one addition's latency per element: a softmax row of 128 spent more in its sum
// than in its exps. These keep kLanes partial results in two vectors and add them at the end,
// so their rounding differs from the sequential loop's by the order of the additions only.
#pragma once
#include <cstdint>

#include "dtnn/simd.hpp"

namespace dtnn::reduce {

template <class T>
[[gnu::always_inline]] inline T sum(const T* __restrict x, std::int64_t n) {
  using V = simd::Vec<T>;
  constexpr int L = simd::kLanes<T>;
  V a = {}, b = {};
  std::int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    a += simd::load<T>(x + i);
    b += simd::load<T>(x + i + L);
  }
  a += b;
  T s = 0;
  for (int k = 0; k < L; ++k) s += a[k];
  for (; i < n; ++i) s += x[i];
  return s;
}

template <class T>
[[gnu::always_inline]] inline T dot(const T* __restrict x, const T* __restrict y, std::int64_t n) {
  using V = simd::Vec<T>;
  constexpr int L = simd::kLanes<T>;
  V a = {}, b = {};
  std::int64_t i = 0;
  for (; i + 2 * L <= n; i += 2 * L) {
    a += simd::load<T>(x + i) * simd::load<T>(y + i);
    b += simd::load<T>(x + i + L) * simd::load<T>(y + i + L);
  }
  a += b;
  T s = 0;
  for (int k = 0; k < L; ++k) s += a[k];
  for (; i < n; ++i) s += x[i] * y[i];
  return s;
}

// n >= 1.
template <class T>
[[gnu::always_inline]] inline T max(const T* __restrict x, std::int64_t n) {
  using V = simd::Vec<T>;
  constexpr int L = simd::kLanes<T>;
  T m = x[0];
  std::int64_t i = 0;
  if (n >= L) {
    V a = simd::load<T>(x);
    for (i = L; i + L <= n; i += L) {
      const V v = simd::load<T>(x + i);
      a = v > a ? v : a;
    }
    for (int k = 0; k < L; ++k) m = a[k] > m ? a[k] : m;
  }
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  return m;
}

}  // namespace dtnn::reduce
