// A process capped by DTNN_ISA maps no plugin file above the cap, and for every plugin built per
// level maps the best one at or below it: run once per level by ctest (isa_ceiling_<level>),
// each in a fresh process, after every conv algorithm has computed a small convolution. Exit 0
// when that holds, 1 (with the offending files) when not, 77 when the CPU lacks the level.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "dtnn/isa.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/testing/conv_conformance.hpp"

namespace fs = std::filesystem;
using namespace dtnn;

namespace {
// "conv_direct.avx2.so" -> {"conv_direct", avx2}; "conv_direct.so" -> {"conv_direct", portable}.
std::pair<std::string, isa::Level> level_of(const std::string& file) {
  const fs::path stem = fs::path(file).stem();
  const std::string tag = stem.extension().string();
  if (const auto l = tag.empty() ? std::nullopt : isa::parse(tag.substr(1)))
    return {stem.stem().string(), *l};
  return {stem.string(), isa::Level::portable};
}
}  // namespace

int main() {
  const char* wanted = std::getenv("DTNN_ISA");
  if (!wanted) {
    std::fprintf(stderr, "isa_ceiling: set DTNN_ISA to the level to check\n");
    return 2;
  }
  const auto level = isa::parse(wanted);
  if (!level) {
    std::fprintf(stderr, "isa_ceiling: DTNN_ISA=%s is not a level\n", wanted);
    return 2;
  }
  if (*level > isa::cpu_level()) {
    std::printf("skipped: this CPU runs up to %s\n", isa::name(isa::cpu_level()));
    return 77;
  }
  try {
    initialize_runtime();
    const Registry registry({DTNN_TEST_PLUGIN_DIR});
    ConvGeometry g;
    g.n = 2, g.h = 6, g.w = 5, g.c = 16, g.k = 16, g.kh = g.kw = 3, g.pad_h = g.pad_w = 1;
    for (const std::string& algo : registry.available("conv"))
      for (const auto& c : testing::check_conv_algorithm(registry, algo, g))
        if (c.supported && !(c.error < testing::conv_tolerance(g.dtype))) {
          std::printf("FAIL: %s %s differs from reference (%g)\n", algo.c_str(), c.pass.c_str(),
                      c.error);
          return 1;
        }

    // The files of each plugin on disk, by level (conv_direct: conv_direct.so, .avx2.so, ...).
    std::map<std::string, std::map<isa::Level, std::string>> on_disk;
    for (const auto& e : fs::directory_iterator(DTNN_TEST_PLUGIN_DIR)) {
      const auto [base, file_level] = level_of(e.path().filename().string());
      on_disk[base][file_level] = e.path().filename().string();
    }
    // The files this process mapped.
    std::ifstream maps("/proc/self/maps");
    std::set<std::string> mapped;
    for (std::string line; std::getline(maps, line);)
      if (const auto slash = line.find('/'); slash != std::string::npos)
        mapped.insert(fs::path(line.substr(slash)).filename().string());

    int bad = 0, per_level = 0;
    for (const auto& [base, files] : on_disk) {
      if (files.size() < 2) continue;  // not built per level
      ++per_level;
      const std::string& best = std::prev(files.upper_bound(*level))->second;
      for (const auto& [file_level, file] : files)
        if (mapped.count(file) != (file == best)) {
          std::printf("FAIL: %s is %s in a process capped at %s (the best file there is %s)\n",
                      file.c_str(), mapped.count(file) ? "mapped" : "not mapped", wanted,
                      best.c_str());
          ++bad;
        }
    }
    std::printf("DTNN_ISA=%s: %d plugins built per level, each mapped at its best level: %s\n",
                wanted, per_level, bad == 0 ? "yes" : "no");
    return bad == 0 && per_level >= 20 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "isa_ceiling: %s\n", e.what());
    return 1;
  }
}
