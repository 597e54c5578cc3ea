// The codecs' fp16 and bf16 conversions (half_floats.hpp) bit for bit: fp16 against the compiler's
// _Float16 conversion (IEEE rounding) over a million float32 patterns and every half pattern;
// bf16 against rounding computed in double.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <ios>

#include "half_floats.hpp"

using namespace dtnn::codecs;

namespace {

std::uint16_t compiler_fp16(float f) {
  const _Float16 h = static_cast<_Float16>(f);
  std::uint16_t bits;
  std::memcpy(&bits, &h, 2);
  return bits;
}

// bfloat16 by its definition: the nearer of the two neighbours in double, ties to the even one.
std::uint16_t reference_bf16(float f) {
  const std::uint32_t x = bits_of(f);
  const auto below = static_cast<std::uint16_t>(x >> 16);
  if ((x & 0xffffu) == 0) return below;
  const auto above = static_cast<std::uint16_t>(below + 1);
  const double d = f, lo = from_bf16(below), hi = from_bf16(above);
  const double to_lo = std::abs(d - lo), to_hi = std::abs(hi - d);
  if (std::isinf(hi))
    return to_lo <= std::abs(d - std::ldexp(1.0, 128) * (d < 0 ? -1 : 1)) ? below : above;
  if (to_lo != to_hi) return to_lo < to_hi ? below : above;
  return (below & 1u) == 0 ? below : above;
}

}  // namespace

TEST_CASE("codecs: fp16 conversion is IEEE's, bit for bit") {
  int wrong = 0;
  for (std::uint64_t u = 0; u <= 0xffffffffull; u += 4093) {
    const float f = float_of(static_cast<std::uint32_t>(u));
    if (std::isnan(f)) {
      CHECK(std::isnan(from_fp16(to_fp16(f))));
      continue;
    }
    if (to_fp16(f) != compiler_fp16(f) && ++wrong < 5)
      CHECK_MESSAGE(false, "float bits " << std::hex << u << ": " << to_fp16(f) << " vs "
                                         << compiler_fp16(f));
  }
  CHECK(wrong == 0);
  // Ties round to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
  CHECK(to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
  CHECK(to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
  CHECK(to_fp16(70000.0f) == 0x7c00);  // beyond 65504: infinity, for the non-finite checks
  CHECK(to_fp16(-1e-9f) == 0x8000);
  for (std::uint32_t h = 0; h < 0x10000; ++h) {  // every half survives the round trip
    const float f = from_fp16(static_cast<std::uint16_t>(h));
    if (!std::isnan(f)) REQUIRE(to_fp16(f) == h);
    if (!std::isnan(f))
      REQUIRE(f == static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(h))));
  }
}

TEST_CASE("codecs: bf16 conversion rounds to nearest, ties to even") {
  for (std::uint64_t u = 0; u <= 0xffffffffull; u += 4093) {
    const float f = float_of(static_cast<std::uint32_t>(u));
    if (std::isnan(f)) {
      CHECK(std::isnan(from_bf16(to_bf16(f))));
      continue;
    }
    if (std::isinf(f)) {
      CHECK(from_bf16(to_bf16(f)) == f);
      continue;
    }
    REQUIRE_MESSAGE(to_bf16(f) == reference_bf16(f), "float bits " << std::hex << u);
  }
  CHECK(to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);  // a tie: to the even neighbour
  CHECK(to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
}
