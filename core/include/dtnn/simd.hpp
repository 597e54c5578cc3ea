// Vec<T>: a 32-byte vector of float or double through GCC/Clang vector extensions (portable C++
// the compiler maps to AVX2/AVX-512/NEON registers), for register-blocked kernels.
#pragma once

namespace dtnn::simd {

// (vector_size on a dependent alias template is silently ignored by GCC; a typedef per type is
// not.)
template <class T>
struct VectorOf;
template <>
struct VectorOf<float> {
  typedef float type __attribute__((vector_size(32)));
};
template <>
struct VectorOf<double> {
  typedef double type __attribute__((vector_size(32)));
};
template <class T>
using Vec = typename VectorOf<T>::type;
template <class T>
inline constexpr int kLanes = 32 / static_cast<int>(sizeof(T));

template <class T>
inline Vec<T> load(const T* p) {
  Vec<T> v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <class T>
inline void store(T* p, const Vec<T>& v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// Rows of a register block for NV vectors of width: about 12 accumulators.
constexpr int rows_for(int nv) { return nv == 1 ? 8 : nv == 2 ? 6 : nv <= 4 ? 3 : 2; }

}  // namespace dtnn::simd
