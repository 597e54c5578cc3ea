// best_of over test doubles of known speed (tests/doubles/sleepy_conv.cpp: reference plus 1, 3 or
// 30 ms per forward): it keeps the fastest, prunes the hopeless, saves its choice and reads it
// back.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/digest.hpp"
#include "dtnn/energy_meter.hpp"
#include "dtnn/testing/conv_conformance.hpp"
#include "dtnn/testing/guarded.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

const Registry& with_doubles() {
  static const Registry r({DTNN_TEST_PLUGIN_DIR, std::string(DTNN_TEST_DOUBLES) + "/sleepy"});
  return r;
}

ConvGeometry small_geometry() {
  ConvGeometry g;
  g.n = 2, g.h = 6, g.w = 5, g.c = 3, g.k = 4, g.kh = g.kw = 3, g.pad_h = g.pad_w = 1;
  return g;
}

// `steps` training steps (forward, backward-filter, backward-data) of algo on g.
void train_steps(ConvAlgorithm& algo, const ConvGeometry& g, int steps) {
  Tensor x = Tensor::zeros(g.x_shape(g.n), g.dtype), w = Tensor::zeros(g.w_shape(), g.dtype);
  Tensor y = Tensor::zeros(g.y_shape(g.n), g.dtype), dx = Tensor::zeros(x.shape(), g.dtype);
  Tensor dw = Tensor::zeros(w.shape(), g.dtype);
  for (int i = 0; i < steps; ++i) {
    algo.forward(x, w, y);
    algo.backward_filter(x, y, dw);
    algo.backward_data(y, w, dx);
  }
}

// `steps` training steps on random values (uniform in [-1, 1]; the gradient too).
void train_random_steps(ConvAlgorithm& algo, const ConvGeometry& g, int steps) {
  Tensor x = Tensor::zeros(g.x_shape(g.n), g.dtype), w = Tensor::zeros(g.w_shape(), g.dtype);
  Tensor y = Tensor::zeros(g.y_shape(g.n), g.dtype), dy = Tensor::zeros(y.shape(), g.dtype);
  Tensor dx = Tensor::zeros(x.shape(), g.dtype), dw = Tensor::zeros(w.shape(), g.dtype);
  testing::fill_uniform(x, 1), testing::fill_uniform(w, 2), testing::fill_uniform(dy, 3);
  for (int i = 0; i < steps; ++i) {
    algo.forward(x, w, y);
    algo.backward_filter(x, dy, dw);
    algo.backward_data(dy, w, dx);
  }
}

// Training steps until best_of has chosen (its name changes; the last tuning step is closed by the
// next forward), at most `limit`: how many rounds that takes depends on what it pruned, which
// depends on how busy the machine is.
int steps_until_chosen(ConvAlgorithm& algo, const ConvGeometry& g, int limit) {
  int steps = 0;
  while (algo.name() == "best_of" && steps < limit) {
    train_steps(algo, g, 1);
    ++steps;
  }
  return steps;
}

std::shared_ptr<ConvAlgorithm> best_of(const std::string& cache, int rounds = 6) {
  return with_doubles().create_as<ConvAlgorithm>(
      "conv", "best_of",
      Params(nlohmann::json{{"candidates", {"test_slow", "test_medium", "test_fast"}},
                            {"rounds", rounds},
                            {"prune_after", 2},
                            {"prune_factor", 5.0},
                            {"cache_file", cache}},
             "test"));
}

}  // namespace

TEST_CASE("best_of keeps the fastest candidate, prunes the slow one and reports the medians") {
  const auto dir = test::temp_dir("best_of");
  const std::string cache = (dir / "cache.json").string();
  std::filesystem::remove(cache);
  auto algo = best_of(cache);
  algo->prepare(small_geometry());
  CHECK(algo->name() == "best_of");
  // Rounds 1-2: three candidates; then test_slow (30 ms against 1, more than the factor 5 even
  // when a busy machine makes test_fast's steps last 5 ms) is pruned; rounds 3-6: test_medium and
  // test_fast, or test_fast alone where a slow wake-up made test_medium look 5 times slower.
  // Without pruning, 18 steps; the 19th forward closes the last.
  const int steps = steps_until_chosen(*algo, small_geometry(), 19);
  CAPTURE(steps);
  CHECK(algo->name() == "best_of(test_fast)");
  CHECK(steps > 3 * 2 + 4);  // not before the 6 rounds
  const std::string report = algo->report();
  CAPTURE(report);
  CHECK(report.find("'test_fast' after 6 rounds") != std::string::npos);
  CHECK(report.find("test_slow") != std::string::npos);
  CHECK(report.find("(pruned)") != std::string::npos);
  CHECK(report.find("test_fast") < report.find("(chosen)"));

  SUBCASE("the choice is saved and read back by the next run") {
    auto again = best_of(cache);
    again->prepare(small_geometry());
    CHECK(again->name() == "best_of(test_fast)");
    CHECK(again->report().find("from the tuning cache") != std::string::npos);
  }
  SUBCASE("a rebuilt candidate (another digest of its plugin file) is tuned again") {
    nlohmann::json j;
    std::ifstream(cache) >> j;
    REQUIRE(j["entries"].size() == 1);
    const std::string key = j["entries"].begin().key();
    const std::string fast =
        "test_fast@" + file_digest(with_doubles().find("conv", "test_fast")->file);
    CAPTURE(key);
    REQUIRE(key.find(fast) != std::string::npos);
    std::string rebuilt = key;
    rebuilt.replace(key.find(fast), fast.size(), "test_fast@0123456789abcdef");
    j["entries"] = {{rebuilt, j["entries"][key]}};
    std::ofstream(cache) << j.dump();
    auto again = best_of(cache);
    again->prepare(small_geometry());
    CHECK(again->name() == "best_of");
  }
  SUBCASE(
      "an entry of the wrong shape is no entry: the layer is tuned again and the entry mended") {
    nlohmann::json j;
    std::ifstream(cache) >> j;
    const std::string key = j["entries"].begin().key();
    j["entries"][key] = {{"choice", 3}};
    j["entries"]["someone else's"] = {"i2c"};
    std::ofstream(cache) << j.dump();
    // Three rounds, so that the choice is a median of three steps: one round's single step of
    // each lost to a busy machine (a sanitizer build under ctest -j) once.
    auto again = best_of(cache, 3);
    again->prepare(small_geometry());
    CHECK(again->name() == "best_of");
    steps_until_chosen(*again, small_geometry(), 3 * 3 + 1);
    CHECK(again->name() == "best_of(test_fast)");
    nlohmann::json after;
    std::ifstream(cache) >> after;
    CHECK(after["entries"][key]["choice"] == "test_fast");
    CHECK(after["entries"]["someone else's"] == nlohmann::json{"i2c"});
  }
  SUBCASE("a different candidate set is a different key") {
    auto other = with_doubles().create_as<ConvAlgorithm>(
        "conv", "best_of",
        Params(nlohmann::json{{"candidates", {"test_medium", "test_fast"}}, {"cache_file", cache}},
               "test"));
    other->prepare(small_geometry());
    CHECK(other->name() == "best_of");
  }
}

TEST_CASE("best_of computes what its candidates compute") {
  const Params p(nlohmann::json{{"candidates", {"test_fast", "i2c"}}, {"cache_file", ""}}, "test");
  for (const auto& c :
       testing::check_conv_algorithm(with_doubles(), "best_of", small_geometry(), p)) {
    CAPTURE(c.pass);
    CHECK(c.error < testing::conv_tolerance(DType::float32));
    CHECK(c.guard == "");
  }
}

// VGG's last layers: 512 channels in and out, 4x4 images, 3x3 windows. F(4x4,3x3)'s transforms
// lose more than plain sums over 4,608 products (1.1e-5 against 4e-7 here), and it is many times
// faster than the reference, so that the choice between the two does not depend on timing.
ConvGeometry vgg_512_geometry() {
  ConvGeometry g;
  g.n = 1, g.h = g.w = 4, g.c = g.k = 512, g.kh = g.kw = 3, g.pad_h = g.pad_w = 1;
  return g;
}

std::shared_ptr<ConvAlgorithm> guarded_best_of(double max_rel_error, const std::string& cache) {
  return with_doubles().create_as<ConvAlgorithm>(
      "conv", "best_of",
      Params(nlohmann::json{{"candidates", {{{"name", "winograd"}, {"tile", 4}}, "reference"}},
                            {"rounds", 1},
                            {"max_rel_error", max_rel_error},
                            {"cache_file", cache}},
             "exp.json: conv"));
}

TEST_CASE("best_of refuses a candidate above max_rel_error and keeps it below") {
  const ConvGeometry g = vgg_512_geometry();
  const auto dir = test::temp_dir("best_of_guard");
  const std::string cache = (dir / "cache.json").string();
  std::filesystem::remove(cache);
  auto tight = guarded_best_of(2e-6, cache);
  tight->prepare(g);
  train_random_steps(*tight, g, 3);
  const std::string refused = tight->report();
  CAPTURE(refused);
  CHECK(tight->name() == "best_of(reference)");
  CHECK(refused.find("winograd(tile=4)") != std::string::npos);
  CHECK(refused.find("(refused: error above exp.json: conv.max_rel_error 2e-06)") !=
        std::string::npos);

  auto loose = guarded_best_of(1e-3, cache);
  loose->prepare(g);
  train_random_steps(*loose, g, 3);
  const std::string kept = loose->report();
  CAPTURE(kept);
  CHECK(loose->name() == "best_of(winograd(tile=4))");
  CHECK(kept.find("refused") == std::string::npos);
  // winograd's error, which the tight bound refused and the loose one keeps (1.1e-05 with one
  // rounding, 7.4e-06 with another: its digits vary with the CPU's kernels).
  std::smatch error;
  REQUIRE(std::regex_search(kept, error,
                            std::regex(R"(winograd\(tile=4\) [0-9.]+ ms error ([0-9.e+-]+))")));
  CHECK(std::stod(error[1]) > 2e-6);
  CHECK(std::stod(error[1]) < 1e-3);

  // The bound is part of the cache's key: each run saved its own choice, with the errors.
  nlohmann::json j;
  std::ifstream(cache) >> j;
  REQUIRE(j["entries"].size() == 2);
  for (const auto& [key, entry] : j["entries"].items()) {
    CAPTURE(key);
    const bool is_tight = key.find("max_rel_error 2e-06") != std::string::npos;
    CHECK((is_tight || key.find("max_rel_error 0.001") != std::string::npos));
    CHECK(entry["choice"] == (is_tight ? "reference" : "winograd(tile=4)"));
    CHECK(entry["rel_error"]["winograd(tile=4)"].get<double>() > 2e-6);
    CHECK(entry["rel_error"]["reference"].get<double>() < 2e-6);
  }
}

TEST_CASE(
    "best_of with precisions as candidates: bf16 refused at a tight bound, chosen at a loose") {
  // i2c in bf16 against the float64 reference on VGG's 4,608-term sums: bf16's operands carry
  // 2^-8 relative rounding, far above 1e-4 and below 3e-2; the reference is many times slower.
  const ConvGeometry g = vgg_512_geometry();
  auto guarded = [&](double bound) {
    return with_doubles().create_as<ConvAlgorithm>(
        "conv", "best_of",
        Params(
            nlohmann::json{{"candidates", {{{"name", "i2c"}, {"precision", "bf16"}}, "reference"}},
                           {"rounds", 1},
                           {"max_rel_error", bound},
                           {"cache_file", ""}},
            "exp.json: conv"));
  };
  auto tight = guarded(1e-4);
  tight->prepare(g);
  train_random_steps(*tight, g, 3);
  const std::string refused = tight->report();
  CAPTURE(refused);
  CHECK(tight->name() == "best_of(reference)");
  CHECK(refused.find("i2c(precision=\"bf16\")") != std::string::npos);
  CHECK(refused.find("(refused: error above exp.json: conv.max_rel_error 0.0001)") !=
        std::string::npos);

  auto loose = guarded(3e-2);
  loose->prepare(g);
  train_random_steps(*loose, g, 3);
  const std::string kept = loose->report();
  CAPTURE(kept);
  CHECK(loose->name() == "best_of(i2c(precision=\"bf16\"))");
  CHECK(kept.find("refused") == std::string::npos);

  // A layer in bf16 (training.precision): i2c computes in it and may err by 8 of its unit
  // roundoffs (0.031), the default max_rel_error (1e-3) notwithstanding; reference stays float32.
  ConvGeometry low = g;
  low.precision = Precision::bf16;
  auto layer_bf16 = with_doubles().create_as<ConvAlgorithm>(
      "conv", "best_of",
      Params(
          nlohmann::json{{"candidates", {"i2c", "reference"}}, {"rounds", 1}, {"cache_file", ""}},
          "exp.json: conv"));
  layer_bf16->prepare(low);
  train_random_steps(*layer_bf16, low, 3);
  const std::string in_bf16 = layer_bf16->report();
  CAPTURE(in_bf16);
  CHECK(layer_bf16->name() == "best_of(i2c)");
  CHECK(in_bf16.find("products bf16") != std::string::npos);
  CHECK(in_bf16.find("refused") == std::string::npos);

  // A precision the algorithm has no path for, or none at all, is refused by name.
  CHECK(
      test::error_of([] {
        with_doubles().create(
            "conv", "best_of",
            Params(nlohmann::json{{"candidates", {{{"name", "winograd"}, {"precision", "bf16"}}}}},
                   "exp.json: conv"));
      }).find("'winograd' lists no bf16 path") != std::string::npos);
  CHECK(test::error_of([] {
          with_doubles().create(
              "conv", "best_of",
              Params(nlohmann::json{{"candidates", {{{"name", "i2c"}, {"precision", "fp8"}}}}},
                     "exp.json: conv"));
        }).find("a precision \"fp32\", \"bf16\" or \"fp16\" (i2c(precision=\"fp8\"))") !=
        std::string::npos);
}

TEST_CASE("best_of refuses a wrong algorithm at its default bound, naming the pass") {
  const Registry registry({DTNN_TEST_PLUGIN_DIR, std::string(DTNN_TEST_DOUBLES) + "/broken"});
  auto algo = registry.create_as<ConvAlgorithm>(
      "conv", "best_of",
      Params(nlohmann::json{{"candidates",
                             {{{"name", "test_broken"}, {"fault", "filter_assigns"}}, "i2c"}},
                            {"rounds", 1},
                            {"cache_file", ""}},
             "exp.json: conv"));
  algo->prepare(small_geometry());
  train_random_steps(*algo, small_geometry(), 3);
  const std::string report = algo->report();
  CAPTURE(report);
  CHECK(algo->name() == "best_of(i2c)");
  CHECK(report.find("test_broken(fault=\"filter_assigns\")") != std::string::npos);
  CHECK(report.find("(refused: error above exp.json: conv.max_rel_error 0.001)") !=
        std::string::npos);
}

// test_busy spins 10 ms a step (CPU time, which the test_cpu_energy double counts as 10 W);
// test_slow sleeps 30 ms (time, but hardly any CPU): the objective decides between them.
TEST_CASE("best_of's objective: time takes the busy candidate, energy and edp the sleepy one") {
  const Registry registry({DTNN_TEST_PLUGIN_DIR, std::string(DTNN_TEST_DOUBLES) + "/sleepy",
                           std::string(DTNN_TEST_DOUBLES) + "/energy"});
  EnergyMeter meter({registry.create_as<EnergySource>("energy", "test_cpu_energy", Params())});
  EnergyMeter* before = energy::current();
  energy::install(&meter);
  for (const std::string objective : {"time", "energy", "edp"}) {
    CAPTURE(objective);
    auto algo = registry.create_as<ConvAlgorithm>(
        "conv", "best_of",
        Params(nlohmann::json{{"candidates", {"test_busy", "test_slow"}},
                              {"rounds", 3},
                              {"objective", objective},
                              {"cache_file", ""}},
               "exp.json: conv"));
    algo->prepare(small_geometry());
    steps_until_chosen(*algo, small_geometry(), 3 * 2 + 1);
    const std::string report = algo->report();
    CAPTURE(report);
    CHECK(algo->name() == (objective == "time" ? "best_of(test_busy)" : "best_of(test_slow)"));
    if (objective != "time") CHECK(report.find(" mJ") != std::string::npos);
  }
  energy::install(nullptr);
  auto algo = registry.create_as<ConvAlgorithm>(
      "conv", "best_of",
      Params(
          nlohmann::json{
              {"candidates", {"test_busy", "test_slow"}}, {"objective", "edp"}, {"cache_file", ""}},
          "exp.json: conv"));
  algo->prepare(small_geometry());
  CHECK(test::error_of([&] {
          train_steps(*algo, small_geometry(), 1);
        }).find("exp.json: conv.objective \"edp\" needs an energy meter") != std::string::npos);
  energy::install(before);
}

TEST_CASE("best_of stops with every candidate's error when none is within max_rel_error") {
  auto algo = with_doubles().create_as<ConvAlgorithm>(
      "conv", "best_of",
      Params(nlohmann::json{{"candidates", {"test_fast", "i2c"}},
                            {"max_rel_error", 1e-12},  // below float32's rounding
                            {"cache_file", ""}},
             "exp.json: conv"));
  algo->prepare(small_geometry());
  const std::string error = test::error_of([&] { train_random_steps(*algo, small_geometry(), 2); });
  CAPTURE(error);
  CHECK(error.find("no candidate within exp.json: conv.max_rel_error 1e-12") != std::string::npos);
  CHECK(error.find("test_fast ") != std::string::npos);
  CHECK(error.find("i2c ") != std::string::npos);
  CHECK(error.find("backward-filter") != std::string::npos);
}

TEST_CASE("a grouped layer reaches only the candidates whose traits take groups") {
  ConvGeometry g = small_geometry();
  g.c = 4, g.k = 6, g.groups = 2;
  // test_fast wraps reference but declares no groups: it must never see this geometry.
  auto algo = with_doubles().create_as<ConvAlgorithm>(
      "conv", "best_of",
      Params(nlohmann::json{{"candidates", {"test_fast", "i2c"}}, {"cache_file", ""}}, "test"));
  std::string why;
  REQUIRE(algo->supports(g, ConvPass::forward, why));
  algo->prepare(g);
  CHECK(algo->name() == "best_of(i2c)");  // the only candidate left
  CHECK(algo->report().find("the only candidate") != std::string::npos);
  CHECK_FALSE(takes_groups(with_doubles(), "test_fast"));
  CHECK(takes_groups(with_doubles(), "i2c"));
}

TEST_CASE("best_of leaves a file that is not its cache alone") {
  const auto dir = test::temp_dir("best_of_foreign");
  const std::string cache = (dir / "notes.txt").string();
  { std::ofstream(cache) << "my notes"; }
  auto algo = best_of(cache, 1);
  algo->prepare(small_geometry());
  train_steps(*algo, small_geometry(), 4);
  CHECK(algo->name().rfind("best_of(", 0) == 0);
  std::ifstream in(cache);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "my notes");
}

TEST_CASE("best_of runs on when its cache file is a directory, and leaves it alone") {
  const auto dir = test::temp_dir("best_of_directory");
  std::filesystem::create_directories(dir / "cache.json");
  auto algo = best_of((dir / "cache.json").string(), 1);
  algo->prepare(small_geometry());
  train_steps(*algo, small_geometry(), 4);
  CHECK(algo->name().rfind("best_of(", 0) == 0);  // chosen (on one step each: any may win)
  CHECK(std::filesystem::is_directory(dir / "cache.json"));
}

TEST_CASE("best_of names bad parameters") {
  CHECK(test::error_of([] {
          with_doubles().create("conv", "best_of",
                                Params(nlohmann::json{{"prune_factor", 0.5}}, "exp.json: conv"));
        }).find("exp.json: conv.prune_factor") != std::string::npos);
  CHECK(test::error_of([] {
          with_doubles().create("conv", "best_of",
                                Params(nlohmann::json{{"candidates", {"nope"}}}, "exp.json: conv"));
        }).find("no conv plugin named 'nope'") != std::string::npos);
  CHECK(test::error_of([] {
          with_doubles().create(
              "conv", "best_of",
              Params(nlohmann::json{{"candidates", {{{"tile", 4}}}}}, "exp.json: conv"));
        }).find("exp.json: conv.candidates[0]") != std::string::npos);
  CHECK(test::error_of([] {
          with_doubles().create(
              "conv", "best_of",
              Params(nlohmann::json{{"candidates", {"i2c", {{"name", "i2c"}}}}}, "exp.json: conv"));
        }).find("each candidate once (i2c twice)") != std::string::npos);
  CHECK(test::error_of([] {
          with_doubles().create("conv", "best_of",
                                Params(nlohmann::json{{"max_rel_error", -1}}, "exp.json: conv"));
        }).find("exp.json: conv.max_rel_error") != std::string::npos);
  CHECK(test::error_of([] {
          with_doubles().create("conv", "best_of",
                                Params(nlohmann::json{{"objective", "joules"}}, "exp.json: conv"));
        }).find("exp.json: conv.objective") != std::string::npos);
}
