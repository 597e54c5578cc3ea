// Bulk rounding to bf16 and fp16 and back (round_kernels.hpp), compiled once per instruction-set
// level into namespace DTNN_ISA_VARIANT, with no std templates (the rules of small_gemm_kernels).
// The results are the values of precision.hpp's scalar to_bf16 / to_fp16, which the tests compare.
#include "round_kernels.hpp"

#include <cstring>

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace dtnn::detail::DTNN_ISA_VARIANT {

namespace {

inline std::uint32_t bits_of(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
inline float float_of(std::uint32_t b) {
  float x;
  std::memcpy(&x, &b, sizeof x);
  return x;
}

// Nearest even on the 16 dropped bits, NaN kept quiet: branch-free so the loop vectorises.
inline float round_bf16(float x) {
  const std::uint32_t bits = bits_of(x);
  const std::uint32_t rounded = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
  const bool nan = (bits & 0x7FFFFFFFu) > 0x7F800000u;
  return float_of(nan ? (bits | 0x00400000u) & 0xFFFF0000u : rounded);
}

void bf16(const float* __restrict src, float* __restrict dst, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = round_bf16(src[i]);
}

// The upper half of round_bf16's bits; back, those bits over 16 zero bits (exact).
void pack_bf16(const float* __restrict src, std::uint16_t* __restrict dst, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i)
    dst[i] = static_cast<std::uint16_t>(bits_of(round_bf16(src[i])) >> 16);
}
void unpack_bf16(const std::uint16_t* __restrict src, float* __restrict dst, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = float_of(std::uint32_t{src[i]} << 16);
}

#if defined(__F16C__)
void fp16(const float* src, float* dst, std::int64_t count) {
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(half));
  }
  for (; i < count; ++i) {
    const __m128i half = _mm_cvtps_ph(_mm_set_ss(src[i]), _MM_FROUND_TO_NEAREST_INT);
    dst[i] = _mm_cvtss_f32(_mm_cvtph_ps(half));
  }
}
#else
// Without F16C: the scalar definition of precision.cpp, one value at a time.
float round_fp16(float x) {
  const std::uint32_t bits = bits_of(x);
  const std::uint32_t sign = bits & 0x80000000u, magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return x;                              // NaN
  if (magnitude >= 0x477FF000u) return float_of(sign | 0x7F800000u);  // to infinity
  if (magnitude < 0x38800000u) {  // a subnormal half: multiples of 2^-24, nearest even
    // In [0.5, 1) a float's step is 2^-24: adding 0.5 rounds to that step, nearest even (0.5's
    // own mantissa is even), and taking 0.5 away again is exact.
    const float value = (float_of(magnitude) + 0.5f) - 0.5f;
    return float_of(sign | bits_of(value));
  }
  const std::uint32_t rounded = (magnitude + 0xFFFu + ((magnitude >> 13) & 1u)) & 0xFFFFE000u;
  return float_of(sign | rounded);
}
void fp16(const float* src, float* dst, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = round_fp16(src[i]);
}
#endif

}  // namespace

const RoundKernels& round_kernels() {
  static const RoundKernels table{&bf16, &fp16, &pack_bf16, &unpack_bf16};
  return table;
}

}  // namespace dtnn::detail::DTNN_ISA_VARIANT
