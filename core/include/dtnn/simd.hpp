// Vec<T, Bytes>: a vector of float or double, 32 bytes unless said otherwise (16 and 64 too),
// through GCC/Clang vector extensions (portable C++ the compiler maps to AVX2/AVX-512/NEON
// registers, or splits where the target's are narrower), for register-blocked kernels.
#pragma once

namespace dtnn::simd {

// (vector_size on a dependent alias template is silently ignored by GCC; a typedef per type is
// not.)
template <class T, int Bytes>
struct VectorOf;
#define DTNN_SIMD_VECTOR(T, Bytes)                      \
  template <>                                           \
  struct VectorOf<T, Bytes> {                           \
    typedef T type __attribute__((vector_size(Bytes))); \
  };
DTNN_SIMD_VECTOR(float, 16)
DTNN_SIMD_VECTOR(float, 32)
DTNN_SIMD_VECTOR(float, 64)
DTNN_SIMD_VECTOR(double, 16)
DTNN_SIMD_VECTOR(double, 32)
DTNN_SIMD_VECTOR(double, 64)
#undef DTNN_SIMD_VECTOR

template <class T, int Bytes = 32>
using Vec = typename VectorOf<T, Bytes>::type;
template <class T, int Bytes = 32>
inline constexpr int kLanes = Bytes / static_cast<int>(sizeof(T));

// (Always inlined: code built for several instruction sets calls these, and one copy out of line
// would serve them all.)
template <class T, int Bytes = 32>
[[gnu::always_inline]] inline Vec<T, Bytes> load(const T* p) {
  Vec<T, Bytes> v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <class T, int Bytes = 32>
[[gnu::always_inline]] inline void store(T* p, const Vec<T, Bytes>& v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// Rows of a register block for NV vectors of width: about 12 accumulators.
constexpr int rows_for(int nv) { return nv == 1 ? 8 : nv == 2 ? 6 : nv <= 4 ? 3 : 2; }

}  // namespace dtnn::simd
