// direct's planar moves (transpose.hpp): the AVX moves write what the plain loops write, for the
// channel counts they take (multiples of 4: an 8 x 8 block, a half one, both), row widths with and
// without a remainder of pixels, and planes with a gap past each row; nothing past a row is
// touched.
#define DTNN_DIRECT_TRANSPOSE_ANY_BUILD 1
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "transpose.hpp"

namespace direct = dtnn::direct;

TEST_CASE("direct: the AVX moves between NHWC rows and planes are the plain ones") {
  if (!__builtin_cpu_supports("avx")) {
    MESSAGE("no AVX on this CPU: the plain moves run here");
    return;
  }
  for (const std::int64_t P : {4, 8, 12, 16, 20})
    for (const std::int64_t w : {1, 7, 8, 24, 26, 33}) {
      CAPTURE(P);
      CAPTURE(w);
      const std::int64_t plane = w + 5;  // a gap past each plane row, which must stay untouched
      std::vector<float> pixels(static_cast<std::size_t>(w * P));
      for (std::size_t i = 0; i < pixels.size(); ++i) pixels[i] = 0.5f * static_cast<float>(i) + 1;
      std::vector<float> plain(static_cast<std::size_t>(P * plane), -7.0f), fast = plain;
      direct::pixels_to_planes_plain<0>(pixels.data(), w, P, plain.data(), plane);
      direct::pixels_to_planes_avx(pixels.data(), w, P, fast.data(), plane);
      CHECK(fast == plain);
      CHECK(plain[static_cast<std::size_t>(plane - 1)] == -7.0f);

      std::vector<float> back_plain(static_cast<std::size_t>(w * P + 3), -9.0f),
          back_fast = back_plain;
      direct::planes_to_pixels_plain<0>(plain.data(), plane, w, P, back_plain.data());
      direct::planes_to_pixels_avx(plain.data(), plane, w, P, back_fast.data());
      CHECK(back_fast == back_plain);
      back_plain.resize(pixels.size());
      CHECK(back_plain == pixels);  // and the plain moves are each other's inverse
    }
}
