// Instruction-set dispatch (dtnn/isa.hpp): the CPU's level, read independently from
// /proc/cpuinfo; the DTNN_ISA ceiling (only lowers, refused by name above the CPU); and every
// kernel family and per-level plugin choosing the best variant the process runs.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "dtnn/gemm.hpp"
#include "dtnn/isa.hpp"
#include "test_support.hpp"

using namespace dtnn;

namespace {

// The level /proc/cpuinfo's flags give (Linux's names), without the core's code.
std::optional<isa::Level> level_from_proc_cpuinfo() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("flags", 0) != 0) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    auto all = [&](std::initializer_list<const char*> names) {
      for (const char* n : names)
        if (!flags.count(n)) return false;
      return true;
    };
    if (!all({"pni", "ssse3", "sse4_1", "sse4_2", "popcnt"})) return std::nullopt;
    if (!all({"avx", "avx2", "fma", "bmi1", "bmi2", "f16c", "abm", "movbe"}))
      return isa::Level::portable;
    if (!all({"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"})) return isa::Level::avx2;
    return isa::Level::avx512;
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("isa: the CPU's level is the one /proc/cpuinfo's flags give") {
#if defined(__x86_64__)
  const std::optional<isa::Level> expected = level_from_proc_cpuinfo();
  REQUIRE(expected.has_value());
  CHECK(isa::name(isa::cpu_level()) == std::string(isa::name(*expected)));
  CHECK(isa::missing_features(isa::cpu_level()).empty());
  CHECK(isa::platform_levels() ==
        std::vector<isa::Level>{isa::Level::portable, isa::Level::avx2, isa::Level::avx512});
  if (isa::cpu_level() < isa::Level::avx512)
    CHECK(!isa::missing_features(isa::Level::avx512).empty());
#else
  CHECK(isa::cpu_level() == isa::Level::portable);
  CHECK(isa::platform_levels() == std::vector<isa::Level>{isa::Level::portable});
#endif
  CHECK(isa::build_level() <= isa::cpu_level());
}

TEST_CASE("isa: a ceiling only lowers the level, and is refused by name above the CPU") {
  using isa::Level;
  CHECK(isa::ceiling_for("auto", Level::avx2, "DTNN_ISA") == Level::avx2);
  CHECK(isa::ceiling_for("portable", Level::avx2, "DTNN_ISA") == Level::portable);
  CHECK(isa::ceiling_for("avx2", Level::avx2, "DTNN_ISA") == Level::avx2);
#if defined(__x86_64__)
  const std::string above =
      test::error_of([] { isa::ceiling_for("avx512", Level::avx2, "DTNN_ISA"); });
  CHECK(above.find("DTNN_ISA=avx512: this CPU does not have avx512") != std::string::npos);
  CHECK(above.find("it runs portable, avx2") != std::string::npos);
#endif
  const std::string unknown =
      test::error_of([] { isa::ceiling_for("sse9", Level::avx512, "DTNN_ISA"); });
  CHECK(unknown.find("DTNN_ISA=sse9: not an instruction-set level; expected one of auto, "
                     "portable") != std::string::npos);
  CHECK(isa::ceiling() <= isa::cpu_level());
  CHECK(isa::best_of({Level::portable, Level::avx2, Level::avx512}, Level::avx2) == Level::avx2);
  CHECK(isa::best_of({Level::avx512}, Level::avx2) == std::nullopt);
  CHECK(isa::parse("avx2") == Level::avx2);
  CHECK(isa::describe(Level::portable).rfind("portable (", 0) == 0);
}

TEST_CASE(
    "isa: every kernel family and per-level plugin chose the best variant this process runs") {
  test::plugins();  // the registry of the process's ceiling records its plugins' choices
  (void)small_gemm_kernels();
  const isa::Level ceiling = isa::ceiling();
  std::set<std::string> families;
  for (const isa::Choice& c : isa::choices()) {
    CAPTURE(c.family);
    families.insert(c.family);
    CHECK(c.built == isa::platform_levels());  // every level is built for each of these
    REQUIRE(c.chosen.has_value());
    CHECK(*c.chosen == ceiling);  // the best: the ceiling itself, since all are built
  }
  for (const char* f : {"core/small_gemm", "conv/direct", "conv/implicit_gemm", "conv/i2c",
                        "conv/winograd", "layer/batchnorm", "layer/maxpool2d", "optimizer/adam"})
    CHECK_MESSAGE(families.count(f), f);
}

TEST_CASE("isa: the registry never opens a plugin file above its ceiling") {
  // A registry capped at portable loads the .so of the floor for every per-level plugin; a
  // plugin file above the cap, named on its own, is refused unopened.
  const Registry r({DTNN_TEST_PLUGIN_DIR}, isa::Level::portable);
  int per_level = 0;
  for (const PluginRecord& rec : r.records()) {
    if (!rec.level) continue;
    CAPTURE(rec.file.string());
    ++per_level;
    CHECK(*rec.level == isa::Level::portable);
    CHECK(rec.file.stem().extension().empty());
  }
  CHECK(per_level >= 20);
#if defined(__x86_64__)
  const std::filesystem::path avx512 =
      std::filesystem::path(DTNN_TEST_PLUGIN_DIR) / "conv_direct.avx512.so";
  const Registry alone({avx512}, isa::Level::avx2);
  REQUIRE(alone.records().size() == 1);
  const PluginRecord& rec = alone.records().front();
  CHECK(rec.status == PluginRecord::Status::unavailable);
  CHECK(rec.descriptor == nullptr);  // never opened
  CHECK(rec.reason.find("built for avx512, above this process's ceiling avx2") !=
        std::string::npos);
#endif
}
