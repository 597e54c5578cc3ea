// direct's bf16 products (bf16_forward.hpp) against reference in float64 on the same float32
// operands, within bf16's bound (dtnn/testing/conv_conformance.hpp): the channel-blocked forward,
// the turned backward-data and backward-filter over output channels of 1 to 5 vectors, input
// channels odd and even and past a filter panel's pairs, strides, padding, and batches whose
// pixels leave a short block and an odd last pixel.
// On a CPU with AVX512-BF16 the errors must also be those of bf16 operands (far above float32's),
// so that a silent fall back to float32 fails too.
#include <doctest/doctest.h>

#include <string>

#include "dtnn/registry.hpp"
#include "dtnn/testing/conv_conformance.hpp"
#include "test_support.hpp"

TEST_CASE(
    "direct's bf16 products stay within bf16's bound, and are bf16's where the CPU has them") {
  const bool bf16_cpu = __builtin_cpu_supports("avx512bf16") && __builtin_cpu_supports("avx512bw");
  const dtnn::Params blocked(nlohmann::json{{"engine", "blocked"}}, "test");
  struct Case {
    std::int64_t n, h, w, c, k, kernel, stride, pad;
  };
  int rounded = 0;
  for (const Case s : {Case{1, 5, 7, 16, 16, 3, 1, 1}, Case{3, 6, 5, 3, 32, 3, 1, 1},
                       Case{2, 7, 7, 31, 48, 3, 2, 1}, Case{1, 4, 4, 300, 64, 1, 1, 0},
                       Case{2, 9, 8, 32, 80, 3, 1, 0}, Case{1, 6, 6, 16, 10, 3, 1, 1}}) {
    dtnn::ConvGeometry g;
    g.n = s.n, g.h = s.h, g.w = s.w, g.c = s.c, g.k = s.k, g.kh = g.kw = s.kernel;
    g.stride_h = g.stride_w = s.stride, g.pad_h = g.pad_w = s.pad;
    g.precision = dtnn::Precision::bf16;
    CAPTURE(g.str());
    for (const auto& c :
         dtnn::testing::check_conv_algorithm(dtnn::test::plugins(), "direct", g, blocked)) {
      CAPTURE(c.pass);
      REQUIRE(c.supported);
      CHECK(c.guard.empty());
      CHECK(c.error <= 1.0);  // the ratio to bf16's bound
      // The passes that multiply in bf16: forward and backward-filter where the output channels
      // are whole vectors of 16, backward-data (a forward of dy) on stride-1 layers of such input
      // channels.
      const bool bf16_pass =
          (c.pass != "backward-data" && s.k % 16 == 0) ||
          (c.pass == "backward-data" && s.stride == 1 && s.c % 16 == 0 && s.c >= 16);
      if (bf16_cpu && bf16_pass) {
        CHECK(c.error > 1e-3);  // bf16's rounding, not float32's
        ++rounded;
      }
    }
  }
  if (bf16_cpu)
    CHECK(rounded >= 10);
  else
    MESSAGE("no AVX512-BF16 on this CPU: direct computes these passes in float32");
}
