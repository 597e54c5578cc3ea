// The topk codec beyond its conformance: which values it keeps, its payload's size, and a peer's
// payload with an index out of range, refused with an error rather than written out of bounds.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "dtnn/codec.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

std::shared_ptr<Codec> topk(double density) {
  return test::plugins().create_as<Codec>(
      "codec", "topk", Params(nlohmann::json{{"density", density}}, "exp.json: parallel.codec"));
}

}  // namespace

TEST_CASE("topk: the largest magnitudes, as (index, value) pairs, and a bad index refused") {
  const auto codec = topk(0.25);
  const std::vector<float> x = {0.5f, -4.0f, 1.0f, 0.0f, 3.0f, -0.25f, 2.0f, -1.5f};
  REQUIRE(codec->payload_bytes(x.size()) == 2 * 8);  // k = 2 of 8
  std::vector<unsigned char> payload(16);
  codec->encode(x, payload);
  std::vector<float> out(x.size(), 0.0f);
  codec->decode_add(payload, out, 1.0f);
  CHECK(out == std::vector<float>{0, -4.0f, 0, 0, 3.0f, 0, 0, 0});
  CHECK(codec->payload_bytes(1) == 8);  // at least one value
  CHECK(codec->contraction(8) == 0.25);
  CHECK_FALSE(codec->carries_weights());
  const std::uint32_t beyond = 8;
  std::memcpy(payload.data() + 8, &beyond, 4);
  CHECK(test::error_of([&] { codec->decode_add(payload, out, 1.0f); }) ==
        "topk: a payload's index 8 is beyond its 8 values (a peer with another model?)");
  CHECK(test::error_of([&] { topk(0.0); }) ==
        "exp.json: parallel.codec.density: expected a fraction in (0, 1], got 0.0");
}
