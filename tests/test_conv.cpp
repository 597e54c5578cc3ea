// Every conv algorithm against `reference` over the conformance sweep: kernel 1/3/5, stride 1/2,
// padding 0/1/2, non-square inputs, batch 1 and 3, dilation, NHWC and NCHW, float32 and float64;
// forward and both gradients, with guard zones around every output.
#include <doctest/doctest.h>

#include <cstring>

#include "dtnn/isa.hpp"
#include "dtnn/testing/conv_conformance.hpp"
#include "dtnn/testing/guarded.hpp"
#include "dtnn/testing/plugin_conformance.hpp"
#include "test_support.hpp"

using namespace dtnn;

TEST_CASE("conv algorithms match reference over the conformance sweep") {
  // Every conv plugin at each setting its traits declare (each engine it can be forced onto).
  const Registry& r = test::plugins();
  int compared = 0;
  for (const std::string& algo : r.available("conv")) {
    if (algo == "reference") continue;
    for (const testing::Check& c : testing::check_plugin(r, *r.find("conv", algo))) {
      if (!c.supported) continue;
      INFO(algo << ": " << c.what << " at " << c.setting << ": " << c.detail);
      CHECK(c.passed);
      ++compared;
    }
  }
  CHECK(compared > 300);
}

// The yardstick itself, grouped: G groups are G convolutions side by side, each on its channels.
TEST_CASE("reference: a grouped convolution is its groups' convolutions side by side") {
  for (Layout layout : {Layout::nhwc, Layout::nchw}) {
    CAPTURE(layout == Layout::nhwc);
    ConvGeometry g;
    g.n = 2, g.h = 5, g.w = 4, g.c = 6, g.k = 4, g.groups = 2, g.kh = g.kw = 3,
    g.pad_h = g.pad_w = 1;
    g.dtype = DType::float64, g.layout = layout;
    ConvGeometry one = g;  // a group alone
    one.c = g.c / g.groups, one.k = g.k / g.groups, one.groups = 1;
    auto grouped = test::plugins().create_as<ConvAlgorithm>("conv", "reference", Params());
    auto single = test::plugins().create_as<ConvAlgorithm>("conv", "reference", Params());
    grouped->prepare(g);
    single->prepare(one);
    Tensor x = Tensor::zeros(g.x_shape(g.n), g.dtype, layout);
    Tensor w = Tensor::zeros(g.w_shape(), g.dtype, layout);
    testing::fill_uniform(x, 1), testing::fill_uniform(w, 2);
    Tensor y = Tensor::zeros(g.y_shape(g.n), g.dtype, layout);
    grouped->forward(x, w, y);
    const bool nhwc = layout == Layout::nhwc;
    const std::int64_t hw = g.h * g.w, out_hw = g.ho() * g.wo(), window = g.kh * g.kw;
    for (std::int64_t group = 0; group < g.groups; ++group) {
      // The group's channels of x and its filters, copied out; its channels of y compared.
      Tensor xg = Tensor::zeros(one.x_shape(g.n), g.dtype, layout);
      Tensor wg = Tensor::zeros(one.w_shape(), g.dtype, layout);
      Tensor yg = Tensor::zeros(one.y_shape(g.n), g.dtype, layout);
      for (std::int64_t s = 0; s < g.n; ++s)
        for (std::int64_t p = 0; p < hw; ++p)
          for (std::int64_t c = 0; c < one.c; ++c) {
            const std::int64_t full = group * one.c + c;
            xg.data<double>()[nhwc ? (s * hw + p) * one.c + c : (s * one.c + c) * hw + p] =
                x.data<double>()[nhwc ? (s * hw + p) * g.c + full : (s * g.c + full) * hw + p];
          }
      for (std::int64_t t = 0; t < window; ++t)  // NHWC [KH, KW, C/G, K]; NCHW [K, C/G, KH, KW]
        for (std::int64_t c = 0; c < one.c; ++c)
          for (std::int64_t k = 0; k < one.k; ++k) {
            const std::int64_t full = group * one.k + k;
            wg.data<double>()[nhwc ? (t * one.c + c) * one.k + k : (k * one.c + c) * window + t] =
                w.data<double>()[nhwc ? (t * one.c + c) * g.k + full
                                      : (full * one.c + c) * window + t];
          }
      single->forward(xg, wg, yg);
      double worst = 0;
      for (std::int64_t s = 0; s < g.n; ++s)
        for (std::int64_t p = 0; p < out_hw; ++p)
          for (std::int64_t k = 0; k < one.k; ++k) {
            const std::int64_t full = group * one.k + k;
            const double a = y.data<double>()[nhwc ? (s * out_hw + p) * g.k + full
                                                   : (s * g.k + full) * out_hw + p];
            const double b = yg.data<double>()[nhwc ? (s * out_hw + p) * one.k + k
                                                    : (s * one.k + k) * out_hw + p];
            worst = std::max(worst, std::abs(a - b));
          }
      CHECK(worst < 1e-12);
    }
  }
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

TEST_CASE("i2c bounds its columns at slab_bytes (256 MiB by default), the whole batch with 0") {
  // 16 samples of a 112x112x64 3x3 layer: 28.9 MB of columns each, 462 MB together.
  ConvGeometry g;
  g.n = 16, g.h = g.w = 112, g.c = 64, g.k = 64, g.kh = g.kw = 3, g.pad_h = g.pad_w = 1;
  g.dtype = DType::float32, g.layout = Layout::nhwc;
  const std::size_t sample = std::size_t(112 * 112) * (3 * 3 * 64) * sizeof(float);
  auto bounded = test::plugins().create_as<ConvAlgorithm>("conv", "i2c", Params());
  bounded->prepare(g);
  CHECK(bounded->workspace_bytes() <= std::size_t(256) << 20);
  CHECK(bounded->workspace_bytes() >= 9 * sample);  // as many whole samples as fit
  auto whole = test::plugins().create_as<ConvAlgorithm>(
      "conv", "i2c", Params(nlohmann::json{{"slab_bytes", 0}}, "test"));
  whole->prepare(g);
  CHECK(whole->workspace_bytes() == 16 * sample);
}

TEST_CASE("the conformance harness catches a wrong algorithm") {
  // test_broken (tests/doubles/broken_conv.cpp) is reference with one fault at a time: the
  // harness must flag the pass that has it, and only that one.
  const Registry broken({DTNN_TEST_PLUGIN_DIR, std::string(DTNN_TEST_DOUBLES) + "/broken"});
  ConvGeometry g;
  g.n = 2, g.h = 5, g.w = 5, g.c = 2, g.k = 3, g.kh = g.kw = 3, g.pad_h = g.pad_w = 1;
  struct Fault {
    const char* fault;
    const char* pass;  // the pass that must fail ("" none)
  };
  for (const Fault f :
       {Fault{"none", ""}, Fault{"forward", "forward"}, Fault{"backward_data", "backward-data"},
        Fault{"filter_assigns", "backward-filter"}, Fault{"overrun", "forward"}})
    for (DType dtype : {DType::float32, DType::float64}) {
      CAPTURE(f.fault);
      g.dtype = dtype;
      const auto checks = testing::check_conv_algorithm(
          broken, "test_broken", g, Params(nlohmann::json{{"fault", f.fault}}, "test"));
      REQUIRE(checks.size() == 3);
      for (const auto& c : checks) {
        CAPTURE(c.pass);
        const bool flagged = c.error >= testing::conv_tolerance(dtype) || !c.guard.empty();
        CHECK(flagged == (c.pass == f.pass));
      }
    }
  // And through the driver `dtnn check-plugin` runs.
  const PluginRecord* r = broken.find("conv", "test_broken");
  REQUIRE(r != nullptr);
  int passed = 0;
  for (const auto& c : testing::check_plugin(broken, *r)) passed += c.supported && c.passed;
  CHECK(passed > 0);
}

namespace {

// winograd with `params` on g against reference: every supported pass within tolerance, guard
// zones intact. Returns the number of passes compared.
int check_winograd(const Registry& r, const ConvGeometry& g, const nlohmann::json& params) {
  int compared = 0;
  for (const auto& c : testing::check_conv_algorithm(r, "winograd", g, Params(params, "test"))) {
    if (!c.supported) continue;
    CAPTURE(params.dump());
    CAPTURE(g.str());
    CAPTURE(c.pass);
    CHECK(c.error < testing::conv_tolerance(g.dtype));
    CHECK(c.guard == "");
    ++compared;
  }
  return compared;
}

// check_winograd over the conformance sweep (both dtypes and layouts) with both tile sizes and
// both ways of sharing blocks, params added. backward_filter "winograd": the Winograd-domain
// gradient on every geometry (auto hands the few-channel ones to i2c). thread_block 0: blocks
// shared by the threads; 3 (tiles): each thread takes its own blocks, several on every geometry.
void sweep_winograd(nlohmann::json params, const Registry& r = test::plugins()) {
  int compared = 0;
  params["backward_filter"] = "winograd";
  for (std::int64_t tile : {2, 4})
    for (std::int64_t thread_block : {0, 3}) {
      params["tile"] = tile;
      params["thread_block"] = thread_block;
      for (DType dtype : {DType::float32, DType::float64})
        for (Layout layout : {Layout::nhwc, Layout::nchw})
          for (const ConvGeometry& g : testing::conformance_geometries(dtype, layout))
            compared += check_winograd(r, g, params);
    }
  CHECK(compared >= 2 * 2 * 2 * 2 * 3 * 9);
}

}  // namespace

TEST_CASE("winograd F(2x2,3x3) and F(4x4,3x3) both match reference") {
  sweep_winograd(nlohmann::json::object());
}

TEST_CASE("every instruction-set variant of every conv plugin matches reference") {
  // The plugins built per level (conv_direct.so, .avx2.so, .avx512.so): a registry capped at each
  // level this CPU runs loads that level's files (never one above), and each gets the conformance
  // sweep; winograd also gets its tile and thread-block sweep.
  int levels = 0;
  for (isa::Level level : isa::platform_levels()) {
    if (level > isa::cpu_level()) continue;
    CAPTURE(isa::name(level));
    const Registry r({DTNN_TEST_PLUGIN_DIR}, level);
    ++levels;
    int per_level = 0;
    for (const char* algo : {"i2c", "implicit_gemm", "winograd", "direct"}) {
      CAPTURE(algo);
      const PluginRecord* rec = r.find("conv", algo);
      REQUIRE(rec != nullptr);
      REQUIRE(rec->level.has_value());
      CHECK(*rec->level == *isa::best_of(rec->levels_built, level));
      CHECK(rec->levels_built == isa::platform_levels());
      for (DType dtype : {DType::float32, DType::float64})
        for (Layout layout : {Layout::nhwc, Layout::nchw})
          for (const ConvGeometry& g : testing::conformance_geometries(dtype, layout))
            for (const auto& c : testing::check_conv_algorithm(r, algo, g)) {
              if (!c.supported) continue;
              CAPTURE(g.str());
              CAPTURE(c.pass);
              CHECK(c.error < testing::conv_tolerance(dtype));
              CHECK(c.guard == "");
              ++per_level;
            }
    }
    CHECK(per_level > 300);
    sweep_winograd(nlohmann::json::object(), r);
  }
  CHECK(levels >= 1);
}

TEST_CASE("winograd over several blocks of tiles, shared and per thread, matches reference") {
  // The sweep's layers fit one block; these have 2 x 11 x 10 F(4x4) tiles (stride-1 output 41 x
  // 38, so the last row and column of tiles are partial), which the blocks of 64 shared tiles and
  // of 16 or 48 tiles per thread split. Shared blocks also with backward-filter's blocks larger
  // than the other passes' (all 220 tiles at once) and smaller; thread blocks with backward-
  // filter's as auto sizes them (all tiles, one block per thread), smaller and larger.
  ConvGeometry g;
  g.n = 2, g.h = 41, g.w = 38, g.c = 16, g.k = 24, g.kh = g.kw = 3, g.pad_h = g.pad_w = 1;
  struct Blocks {
    std::int64_t thread_block, block_bytes, filter_block_bytes, filter_thread_block;
  };
  const std::int64_t all = std::int64_t{1} << 30;
  int compared = 0;
  for (const Blocks& b : {Blocks{0, 1, 1, -1}, Blocks{0, 1, all, -1}, Blocks{0, all, 1, -1},
                          Blocks{16, 1, 1, -1}, Blocks{48, 1, 1, 5}, Blocks{16, 1, 1, 100}})
    for (DType dtype : {DType::float32, DType::float64})
      for (Layout layout : {Layout::nhwc, Layout::nchw}) {
        g.dtype = dtype, g.layout = layout;
        compared += check_winograd(test::plugins(), g,
                                   {{"tile", 4},
                                    {"block_bytes", b.block_bytes},
                                    {"filter_block_bytes", b.filter_block_bytes},
                                    {"thread_block", b.thread_block},
                                    {"filter_thread_block", b.filter_thread_block},
                                    {"backward_filter", "winograd"}});
      }
  CHECK(compared == 6 * 2 * 2 * 3);
}

TEST_CASE("direct's two engines, each forced on NHWC layers, match reference") {
  // auto sends few-channel NHWC layers to the planar engine (transposed into its tiles) and the
  // rest to channel_blocked; forcing each covers both on the whole sweep.
  for (const char* engine : {"planar", "blocked"}) {
    int compared = 0;
    for (DType dtype : {DType::float32, DType::float64})
      for (const ConvGeometry& g : testing::conformance_geometries(dtype, Layout::nhwc))
        for (const auto& c :
             testing::check_conv_algorithm(test::plugins(), "direct", g,
                                           Params(nlohmann::json{{"engine", engine}}, "test"))) {
          if (!c.supported) continue;
          CAPTURE(engine);
          CAPTURE(g.str());
          CAPTURE(c.pass);
          CHECK(c.error < testing::conv_tolerance(dtype));
          CHECK(c.guard == "");
          ++compared;
        }
    CAPTURE(engine);
    CHECK(compared >= 2 * 3 * 9);
  }
}

TEST_CASE("backward-filter summed per thread gives the same dw on every call") {
  // winograd in thread blocks and gemm's shallow products sum dw per thread; each thread must get
  // the same blocks every time, or the sums' rounding (and so training) varies from run to run.
  struct Case {
    const char* algorithm;
    nlohmann::json params;
    ConvGeometry g;
  };
  ConvGeometry wide, stem;
  wide.n = 2, wide.h = 41, wide.w = 38, wide.c = 16, wide.k = 24, wide.kh = wide.kw = 3;
  wide.pad_h = wide.pad_w = 1;
  stem.n = 4, stem.h = stem.w = 32, stem.c = 3, stem.k = 16, stem.kh = stem.kw = 3;
  stem.pad_h = stem.pad_w = 1;
  for (const Case& k :
       {Case{"winograd", {{"thread_block", 8}, {"backward_filter", "winograd"}}, wide},
        Case{"implicit_gemm", nlohmann::json::object(), stem}}) {
    CAPTURE(k.algorithm);
    auto algo =
        test::plugins().create_as<ConvAlgorithm>("conv", k.algorithm, Params(k.params, "test"));
    algo->prepare(k.g);
    Tensor x = Tensor::empty(k.g.x_shape(k.g.n), k.g.dtype, k.g.layout);
    Tensor dy = Tensor::empty(k.g.y_shape(k.g.n), k.g.dtype, k.g.layout);
    testing::fill_uniform(x, 1);
    testing::fill_uniform(dy, 2);
    Tensor first = Tensor::zeros(k.g.w_shape(), k.g.dtype, k.g.layout);
    algo->backward_filter(x, dy, first);
    for (int call = 0; call < 8; ++call) {
      Tensor dw = Tensor::zeros(k.g.w_shape(), k.g.dtype, k.g.layout);
      algo->backward_filter(x, dy, dw);
      CHECK(std::memcmp(dw.data<float>(), first.data<float>(), dw.numel() * sizeof(float)) == 0);
    }
  }
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
  CHECK(named("implicit_gemm", 16) == "winograd(backward-filter: implicit_gemm)");
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
