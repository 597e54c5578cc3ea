// exp and tanh for float written so that loops over them vectorise (libm's expf is a call per
// element: GELU spent 16 ns per value in it, 40% of a transformer's step). double goes to libm.
//
// exp(x) = 2^k * e^r,  k = round(x / ln 2),  r = x - k ln 2 in [-ln2/2, ln2/2] (ln 2 split in
// two parts so that r keeps its bits), e^r by its Taylor series to r^7 / 7! (truncation below
// 2e-8 relative on that interval), 2^k written into the exponent field. x is clamped to
// [-87, 88], where the result stays a normal float. Relative error about 2 ulp.
// tanh(x) = sign(x) (1 - e) / (1 + e),  e = exp(-2 |x|): absolute error about 1e-7 (relative
// error grows near 0, where 1 - e cancels; GELU adds it to 1).
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>

namespace dtnn::fast {

inline float exp(float x) {
  x = x < -87.0f ? -87.0f : (x > 88.0f ? 88.0f : x);
  const float k = std::floor(x * 1.44269504088896341f + 0.5f);
  const float r = (x - k * 0.693145751953125f) - k * 1.42860682030941723212e-6f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const auto bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(k) + 127) << 23;
  return p * std::bit_cast<float>(bits);
}
inline double exp(double x) { return std::exp(x); }

inline float tanh(float x) {
  const float e = exp(-2.0f * std::fabs(x));
  const float t = (1.0f - e) / (1.0f + e);
  return x < 0 ? -t : t;
}
inline double tanh(double x) { return std::tanh(x); }

}  // namespace dtnn::fast
