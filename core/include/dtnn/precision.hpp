// The precision products are computed in (`training.precision`): float32, or inputs rounded to
// bfloat16 or IEEE half with float32 accumulation (docs/precision.md). Parameters, optimizer state
// and reductions stay float32 whatever is chosen.
//
//   format  bits (sign, exponent, mantissa)  unit roundoff u  largest finite   smallest normal
//   fp32    1, 8, 23                         2^-24            3.4e38           1.2e-38
//   bf16    1, 8, 7                          2^-8             3.4e38           1.2e-38
//   fp16    1, 5, 10                         2^-11            65504            6.1e-5 (subnormals
//                                                                              down to 6.0e-8)
// Rounding is to nearest, ties to even; a value past the largest finite becomes infinity (fp16:
// from 65520 on), NaN stays NaN.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string_view>

#include "dtnn/core_export.hpp"
#include "dtnn/isa.hpp"

namespace dtnn {

enum class Precision : std::uint8_t { fp32 = 0, bf16 = 1, fp16 = 2 };

DTNN_CORE_EXPORT const char* to_string(Precision p);
// "fp32", "bf16", "fp16" (and PyDTNN's dtype names "float32", "bfloat16", "float16").
DTNN_CORE_EXPORT std::optional<Precision> parse_precision(std::string_view name);
// Half the distance from 1 to the next value: the largest relative error of rounding a normal
// number to the format.
DTNN_CORE_EXPORT double unit_roundoff(Precision p);

// The formats' bits from float32, rounded to nearest even in portable integer code (the same bits
// as the hardware's conversions; the fp16 and bf16 codecs send these), and back.
inline std::uint16_t to_bf16(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  // Adding 0x7FFF, plus one when the kept part is odd, rounds the dropped 16 bits to nearest even
  // (a carry out of the mantissa steps the exponent, up to infinity).
  return static_cast<std::uint16_t>((bits + 0x7FFFu + ((bits >> 16) & 1u)) >> 16);
}

inline float from_bf16(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}
// A pair of bf16 values as one 32-bit word, low then high half: what `vdpbf16ps` multiplies
// pairwise (a missing second value is 0.0f).
inline std::uint32_t to_bf16_pair(float low, float high) {
  return std::uint32_t{to_bf16(low)} | std::uint32_t{to_bf16(high)} << 16;
}

inline std::uint16_t to_fp16(float x) {
  const auto bits = std::bit_cast<std::uint32_t>(x);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) return static_cast<std::uint16_t>(sign | 0x7E00u);  // NaN
  // 65520 (0x477FF000) lies halfway between 65504, the largest half, and 65536: ties to even
  // round it, and everything above, to infinity.
  if (magnitude >= 0x477FF000u) return static_cast<std::uint16_t>(sign | 0x7C00u);
  if (magnitude < 0x38800000u) {
    // Below 2^-14: a subnormal half, counted in units of 2^-24 (exact scaling, then the default
    // rounding mode's nearest even). 1024 units is the smallest normal's encoding.
    const float units = std::bit_cast<float>(magnitude) * 16777216.0f;
    return static_cast<std::uint16_t>(sign | static_cast<std::uint32_t>(std::nearbyint(units)));
  }
  const std::uint32_t exponent = (magnitude >> 23) - 127u + 15u;
  const std::uint32_t mantissa = magnitude & 0x7FFFFFu;
  std::uint32_t half = (exponent << 10) | (mantissa >> 13);
  const std::uint32_t dropped = mantissa & 0x1FFFu;
  if (dropped > 0x1000u || (dropped == 0x1000u && (half & 1u))) ++half;  // carries are right
  return static_cast<std::uint16_t>(sign | half);
}

inline float from_fp16(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu, mantissa = bits & 0x3FFu;
  if (exponent == 0) {  // zero or subnormal: mantissa x 2^-24, exact in float
    const float value = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -value : value;
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent - 15u + 127u) << 23) | (mantissa << 13));
}

// x rounded to the format and back: the value a product in precision p reads.
DTNN_CORE_EXPORT float round_to(Precision p, float x);
DTNN_CORE_EXPORT double round_to(Precision p, double x);  // through float32 first
// dst[i] = round_to(p, src[i]) for i < count (dst may be src).
DTNN_CORE_EXPORT void round_to(Precision p, const float* src, float* dst, std::int64_t count);
DTNN_CORE_EXPORT void round_to(Precision p, const double* src, double* dst, std::int64_t count);

// dst[i] = to_bf16(src[i]) and its inverse, over the threads (the level's kernels below).
DTNN_CORE_EXPORT void pack_bf16(const float* src, std::uint16_t* dst, std::int64_t count);
DTNN_CORE_EXPORT void unpack_bf16(const std::uint16_t* src, float* dst, std::int64_t count);

// The bulk rounding round_to runs, one variant per instruction-set level (round_kernels.cpp): the
// bit arithmetic vectorised for bf16; for fp16 the F16C conversions from the avx2 level on. A test
// can run each (round_kernels().at(level)); all give the scalar functions' values.
struct RoundKernels {
  void (*bf16)(const float* src, float* dst, std::int64_t count);
  void (*fp16)(const float* src, float* dst, std::int64_t count);
  // Packed bfloat16 (activations kept for backward, training.saved_activations): to_bf16's bits,
  // and back (exact).
  void (*pack_bf16)(const float* src, std::uint16_t* dst, std::int64_t count);
  void (*unpack_bf16)(const std::uint16_t* src, float* dst, std::int64_t count);
};
DTNN_CORE_EXPORT const isa::Family<RoundKernels>& round_kernels();

}  // namespace dtnn
