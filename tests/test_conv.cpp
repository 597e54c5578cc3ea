// Every conv algorithm against `reference` over the conformance sweep: kernel 1/3/5, stride 1/2,
// padding 0/1/2, non-square inputs, batch 1 and 3, dilation, NHWC and NCHW, float32 and float64;
// forward and both gradients, with guard zones around every output.
#include <doctest/doctest.h>

#include "dtnn/testing/conv_conformance.hpp"
#include "test_support.hpp"

using namespace dtnn;

TEST_CASE("conv algorithms match reference over the conformance sweep") {
  const Registry& r = test::plugins();
  int compared = 0;
  for (const std::string& algo : r.available("conv")) {
    if (algo == "reference") continue;
    for (DType dtype : {DType::float32, DType::float64})
      for (Layout layout : {Layout::nhwc, Layout::nchw})
        for (const ConvGeometry& g : testing::conformance_geometries(dtype, layout)) {
          for (const auto& c : testing::check_conv_algorithm(r, algo, g)) {
            CAPTURE(algo);
            CAPTURE(g.str());
            CAPTURE(c.pass);
            if (!c.supported) continue;
            CHECK(c.error < testing::conv_tolerance(dtype));
            CHECK(c.guard == "");
            ++compared;
          }
        }
  }
  CHECK(compared > 300);
}

TEST_CASE("i2c in slabs of one and two samples matches reference") {
  for (std::int64_t slab_bytes : {1, 2 * 7 * 9 * 27 * 4})
    for (const ConvGeometry& g : testing::conformance_geometries(DType::float32, Layout::nhwc)) {
      if (g.n == 1) continue;
      for (const auto& c : testing::check_conv_algorithm(
               test::plugins(), "i2c", g,
               Params(nlohmann::json{{"slab_bytes", slab_bytes}}, "test"))) {
        CAPTURE(g.str());
        CAPTURE(c.pass);
        CAPTURE(slab_bytes);
        CHECK(c.error < testing::conv_tolerance(DType::float32));
        CHECK(c.guard == "");
      }
    }
}

TEST_CASE("the conformance harness catches a wrong algorithm") {
  // reference against itself is exact; a perturbed weight must show up as an error.
  ConvGeometry g;
  g.n = 2, g.h = 5, g.w = 5, g.c = 2, g.k = 3;
  auto checks = testing::check_conv_algorithm(test::plugins(), "reference", g);
  for (const auto& c : checks) CHECK(c.error == 0.0);
}

TEST_CASE("winograd F(2x2,3x3) and F(4x4,3x3) both match reference") {
  // backward_filter "winograd": the Winograd-domain gradient on every geometry (auto hands the
  // few-channel ones to i2c). thread_block 0: blocks shared by the threads; 3 (tiles): each
  // thread takes its own blocks, several of them on every geometry.
  int compared = 0;
  for (std::int64_t tile : {2, 4})
    for (std::int64_t thread_block : {0, 3})
      for (DType dtype : {DType::float32, DType::float64})
        for (Layout layout : {Layout::nhwc, Layout::nchw})
          for (const ConvGeometry& g : testing::conformance_geometries(dtype, layout)) {
            const Params p(nlohmann::json{{"tile", tile},
                                          {"thread_block", thread_block},
                                          {"backward_filter", "winograd"}},
                           "test");
            for (const auto& c : testing::check_conv_algorithm(test::plugins(), "winograd", g, p)) {
              if (!c.supported) continue;
              CAPTURE(tile);
              CAPTURE(thread_block);
              CAPTURE(g.str());
              CAPTURE(c.pass);
              CHECK(c.error < testing::conv_tolerance(dtype));
              CHECK(c.guard == "");
              ++compared;
            }
          }
  CHECK(compared >= 2 * 2 * 2 * 2 * 3 * 9);
}

TEST_CASE("winograd over several blocks of tiles, shared and per thread, matches reference") {
  // The sweep's layers fit one block; these have 2 x 11 x 10 F(4x4) tiles (stride-1 output 41 x
  // 38, so the last row and column of tiles are partial), which the blocks of 64 shared tiles and
  // of 16 or 48 tiles per thread split.
  ConvGeometry g;
  g.n = 2, g.h = 41, g.w = 38, g.c = 16, g.k = 24, g.kh = g.kw = 3, g.pad_h = g.pad_w = 1;
  int compared = 0;
  for (std::int64_t thread_block : {0, 16, 48})
    for (DType dtype : {DType::float32, DType::float64})
      for (Layout layout : {Layout::nhwc, Layout::nchw}) {
        g.dtype = dtype, g.layout = layout;
        const Params p(nlohmann::json{{"tile", 4},
                                      {"block_bytes", 1},
                                      {"thread_block", thread_block},
                                      {"backward_filter", "winograd"}},
                       "test");
        for (const auto& c : testing::check_conv_algorithm(test::plugins(), "winograd", g, p)) {
          CAPTURE(thread_block);
          CAPTURE(g.str());
          CAPTURE(c.pass);
          CHECK(c.error < testing::conv_tolerance(dtype));
          CHECK(c.guard == "");
          ++compared;
        }
      }
  CHECK(compared == 3 * 2 * 2 * 3);
}

TEST_CASE("winograd hands backward-filter to the algorithm it names, and says so") {
  ConvGeometry g;
  g.n = 2, g.h = 6, g.w = 5, g.c = 3, g.k = 4, g.kh = g.kw = 3, g.pad_h = g.pad_w = 1;
  auto named = [&](const std::string& by, std::int64_t c) {
    g.c = c;
    auto algo = test::plugins().create_as<ConvAlgorithm>(
        "conv", "winograd", Params(nlohmann::json{{"backward_filter", by}}, "test"));
    algo->prepare(g);
    return algo->name();
  };
  CHECK(named("auto", 3) == "winograd(backward-filter: i2c)");
  CHECK(named("auto", 16) == "winograd");
  CHECK(named("gemm", 16) == "winograd(backward-filter: gemm)");
  CHECK(named("winograd", 3) == "winograd");
  for (const auto& c : testing::check_conv_algorithm(
           test::plugins(), "winograd", g,
           Params(nlohmann::json{{"backward_filter", "direct"}}, "test"))) {
    CAPTURE(c.pass);
    CHECK(c.error < testing::conv_tolerance(DType::float32));
  }
  CHECK(test::error_of([] {
          test::plugins().create_as<ConvAlgorithm>(
              "conv", "winograd", Params(nlohmann::json{{"backward_filter", "fft"}}, "test"));
        }).find("parameter 'backward_filter' is \"fft\"") != std::string::npos);
}
