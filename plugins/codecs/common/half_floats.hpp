// IEEE half precision (fp16) and bfloat16 from float32 and back, in portable integer code: rounding
// to nearest, ties to even, as the hardware conversions do; overflow gives infinity (so that the
// non-finite checks see a gradient that blew up), NaN stays NaN. fp16's subnormals are kept.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

namespace dtnn::codecs {

inline std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float float_of(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline std::uint16_t to_fp16(float f) {
  const std::uint32_t x = bits_of(f);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t magnitude = x & 0x7fffffffu;
  if (magnitude >= 0x7f800000u)  // infinity, or NaN (kept quiet)
    return static_cast<std::uint16_t>(sign | (magnitude > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (magnitude >= 0x47800000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // >= 2^16
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal, in units of 2^-24
    const float units = std::nearbyint(float_of(magnitude) * 16777216.0f);
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(units));
  }
  const std::uint32_t exponent = (magnitude >> 23) - 127 + 15, mantissa = magnitude & 0x7fffffu;
  std::uint32_t h = (exponent << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;  // may carry up to infinity
  return static_cast<std::uint16_t>(sign | h);
}

inline float from_fp16(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa x 2^-24, exact in float
    const float value = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -value : value;
  }
  if (exponent == 31) return float_of(sign | 0x7f800000u | (mantissa << 13));
  return float_of(sign | ((exponent - 15 + 127) << 23) | (mantissa << 13));
}

inline std::uint16_t to_bf16(float f) {
  const std::uint32_t x = bits_of(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float from_bf16(std::uint16_t b) { return float_of(static_cast<std::uint32_t>(b) << 16); }

}  // namespace dtnn::codecs
