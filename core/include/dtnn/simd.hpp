// Vec<T, Bytes>: a vector of float or double through GCC/Clang vector extensions (portable C++ the
// compiler maps to SSE/AVX2/AVX-512/NEON registers), for register-blocked kernels. By default as
// wide as the instruction set the translation unit is compiled for handles in one register:
// kVectorBytes, 32 with AVX (also with AVX-512: the kernels were tuned on 32-byte vectors there,
// with more of them), 16 otherwise. A wider Vec than the target's registers is split by the
// compiler, and not well: a 32-byte accumulator block on SSE alone ran 30-45x slower than on
// AVX2 (bench/conv_bench, direct, ResNet-20's layers), through the stack.
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

#if defined(__AVX__)
inline constexpr int kVectorBytes = 32;
#else
inline constexpr int kVectorBytes = 16;
#endif

// The widest vector of the instruction set this is compiled for (64 bytes with AVX-512), for
// streaming kernels that take every lane the level has whatever kVectorBytes says.
#if defined(__AVX512F__)
inline constexpr int kWidestBytes = 64;
#elif defined(__AVX__)
inline constexpr int kWidestBytes = 32;
#else
inline constexpr int kWidestBytes = 16;
#endif

template <class T, int Bytes = kVectorBytes>
using Vec = typename VectorOf<T, Bytes>::type;
template <class T, int Bytes = kVectorBytes>
inline constexpr int kLanes = Bytes / static_cast<int>(sizeof(T));

// (Always inlined: code built for several instruction sets calls these, and one copy out of line
// would serve them all.)
template <class T, int Bytes = kVectorBytes>
[[gnu::always_inline]] inline Vec<T, Bytes> load(const T* p) {
  Vec<T, Bytes> v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
template <class T, int Bytes = kVectorBytes>
[[gnu::always_inline]] inline void store(T* p, const Vec<T, Bytes>& v) {
  __builtin_memcpy(p, &v, sizeof v);
}

// Rows of a register block for NV vectors of width: about 12 accumulators, the NV vectors of a row
// of B and a broadcast value of A. With AVX-512's 32 registers they all fit; with 16 (AVX2, SSE)
// the compiler reads some of B's vectors from memory inside the multiply-adds instead, which
// costs less than fewer accumulators (AVX2 on AMD Zen 5, 512x32x512: 3 rows of 4 vectors 95
// GFLOPS, 2 rows 60), as long as every index into the accumulators is known at compile time
// (small_gemm_kernels.cpp's store).
#if defined(__AVX512F__)
constexpr int rows_for(int nv) { return nv == 1 ? 8 : nv == 2 ? 6 : nv <= 4 ? 3 : 2; }
#else
constexpr int rows_for(int nv) { return nv == 1 ? 8 : nv == 2 ? 6 : nv <= 4 ? 3 : nv <= 6 ? 2 : 1; }
#endif

}  // namespace dtnn::simd
