// batchnorm's NHWC loops over a flat run of values whose channel repeats with period C. Taken in
// chunks of P = lcm(C, 16) values, every chunk starts at channel 0, so the per-channel
// coefficients and sums are P-wide arrays with P known at compile time, which the compiler keeps
// in vector registers: one stream through memory, instead of a short loop over C per row (16
// channels are one vector, and the row loop's overhead was most of the time). P is 16, 32, 48 or
// 64 (C = 16, 32, 48, 64, and the divisors of 48 and 64); wider layers' rows vectorise along their
// channels as they are.
#pragma once
#include <cstdint>
#include <numeric>

#include "dtnn/simd.hpp"

namespace dtnn::batchnorm {

// P for C channels, or 0 where it would be over 64.
inline std::int64_t pattern_of(std::int64_t channels) {
  const std::int64_t p = std::lcm<std::int64_t>(channels, 16);
  return p <= 64 ? p : 0;
}

// f.template operator()<P>() for p, one of pattern_of's values.
template <class F>
void with_pattern(std::int64_t p, F&& f) {
  if (p == 16) return f.template operator()<16>();
  if (p == 32) return f.template operator()<32>();
  if (p == 48) return f.template operator()<48>();
  f.template operator()<64>();
}

// u where keep > 0, else 0 (Keep), or u.
template <bool Keep, class T>
inline T kept(T u, T keep) {
  return Keep ? (keep > T(0) ? u : T(0)) : u;
}

// The widest vector of the instruction set this is compiled for (the plugin is built per level).
inline constexpr int kPatternBytes = simd::kWidestBytes;

// (Written with explicit vectors: GCC left the P-wide arrays of the plain loops mostly scalar.)
template <class T>
using PatternVec = simd::Vec<T, kPatternBytes>;
template <class T>
inline constexpr int kPatternLanes = kPatternBytes / static_cast<int>(sizeof(T));

template <class T>
[[gnu::always_inline]] inline PatternVec<T> vload(const T* p) {
  return simd::load<T, kPatternBytes>(p);
}

// u where keep > 0, else 0 (Keep), or u: a vector.
template <bool Keep, class T>
[[gnu::always_inline]] inline PatternVec<T> kept_vector(const T* u, const T* keep) {
  const PatternVec<T> uv = vload(u);
  if constexpr (!Keep) return uv;
  const PatternVec<T> zero = {};
  return vload(keep) > zero ? uv : zero;
}

// s1[j] = sum over the chunks of u[j], s2[j] = sum of u[j] * (v[j] - shift[j]) (u counted only
// where keep > 0 with Keep), over n values, n a multiple of P; summed in T.
template <class T, int P, bool Keep>
inline void pattern_sums(const T* __restrict u, const T* __restrict v, const T* __restrict keep,
                         std::int64_t n, const T* shift, T* s1, T* s2) {
  constexpr int L = kPatternLanes<T>, NV = P / L;
  PatternVec<T> a1[NV] = {}, a2[NV] = {}, sh[NV];
  for (int k = 0; k < NV; ++k) sh[k] = vload(shift + k * L);
  for (std::int64_t i = 0; i < n; i += P)
#pragma GCC unroll 16
    for (int k = 0; k < NV; ++k) {
      const PatternVec<T> uv = kept_vector<Keep>(u + i + k * L, keep + i + k * L);
      a1[k] += uv;
      a2[k] += uv * (vload(v + i + k * L) - sh[k]);
    }
  for (int k = 0; k < NV; ++k) {
    simd::store<T, kPatternBytes>(s1 + k * L, a1[k]);
    simd::store<T, kPatternBytes>(s2 + k * L, a2[k]);
  }
}

// out[i] = act(a[j] * u[i] + b[j] * v[i] + d[j]), j = i mod P, over n values, n a multiple of P;
// act is std::max(., 0) with Relu (NaN stays NaN); u counts only where keep > 0 with Keep.
template <class T, int P, bool Relu, bool Keep>
inline void pattern_combine(const T* __restrict u, const T* __restrict v, const T* __restrict keep,
                            std::int64_t n, const T* a, const T* b, const T* d, T* __restrict out) {
  constexpr int L = kPatternLanes<T>, NV = P / L;
  PatternVec<T> av[NV], bv[NV], dv[NV];
  for (int k = 0; k < NV; ++k)
    av[k] = vload(a + k * L), bv[k] = vload(b + k * L), dv[k] = vload(d + k * L);
  const PatternVec<T> zero = {};
  for (std::int64_t i = 0; i < n; i += P)
#pragma GCC unroll 16
    for (int k = 0; k < NV; ++k) {
      const std::int64_t at = i + k * L;
      PatternVec<T> value =
          av[k] * kept_vector<Keep>(u + at, keep + at) + bv[k] * vload(v + at) + dv[k];
      if constexpr (Relu) value = value < zero ? zero : value;
      simd::store<T, kPatternBytes>(out + at, value);
    }
}

}  // namespace dtnn::batchnorm
