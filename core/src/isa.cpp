#include "dtnn/isa.hpp"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>

#include "dtnn/error.hpp"

namespace dtnn::isa {

namespace {

// The features each level adds to the one below (what x86-64-v2/v3/v4 require, as GCC names them
// for __builtin_cpu_supports; v2's CMPXCHG16B and LAHF have no name there).
struct LevelFeatures {
  Level level;
  const char* march;
  std::vector<const char*> features;
};

const std::vector<LevelFeatures>& level_features() {
#if defined(__x86_64__)
  static const std::vector<LevelFeatures> table = {
      {Level::portable, "x86-64-v2", {"sse3", "ssse3", "sse4.1", "sse4.2", "popcnt"}},
      {Level::avx2, "x86-64-v3", {"avx", "avx2", "fma", "bmi", "bmi2", "f16c", "lzcnt", "movbe"}},
      {Level::avx512, "x86-64-v4", {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}},
  };
#else
  static const std::vector<LevelFeatures> table = {{Level::portable, "the build's target", {}}};
#endif
  return table;
}

// __builtin_cpu_supports wants a string literal, so each name is spelt out once here. GCC's
// answer covers the OS too: AVX and AVX-512 count only when XCR0 says their registers are saved.
bool cpu_has(std::string_view feature) {
#if defined(__x86_64__)
  __builtin_cpu_init();
#define DTNN_FEATURE(f) \
  if (feature == f) return __builtin_cpu_supports(f) != 0;
  DTNN_FEATURE("sse3")
  DTNN_FEATURE("ssse3")
  DTNN_FEATURE("sse4.1")
  DTNN_FEATURE("sse4.2")
  DTNN_FEATURE("popcnt")
  DTNN_FEATURE("avx")
  DTNN_FEATURE("avx2")
  DTNN_FEATURE("fma")
  DTNN_FEATURE("bmi")
  DTNN_FEATURE("bmi2")
  // Not every compiler's builtin knows these three (clang 14 does not): CPUID tells. None holds
  // register state of its own (f16c's is AVX's, checked above through "avx").
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (feature == "f16c") return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 29));
  if (feature == "movbe") return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 22));
  if (feature == "lzcnt") return __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & (1u << 5));
  DTNN_FEATURE("avx512f")
  DTNN_FEATURE("avx512bw")
  DTNN_FEATURE("avx512cd")
  DTNN_FEATURE("avx512dq")
  DTNN_FEATURE("avx512vl")
#undef DTNN_FEATURE
#endif
  (void)feature;
  return false;
}

std::string join(const std::vector<std::string>& names, const char* separator) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : separator) + n;
  return s;
}

struct Families {
  std::mutex mutex;
  std::map<std::string, Choice> plugins;              // recorded by registries
  std::map<std::string, std::vector<Level>> library;  // follow the process's ceiling
};
Families& families() {
  static Families f;
  return f;
}

}  // namespace

const char* name(Level level) {
  switch (level) {
    case Level::portable:
      return "portable";
    case Level::avx2:
      return "avx2";
    case Level::avx512:
      return "avx512";
  }
  return "?";
}

std::string describe(Level level) {
  for (const LevelFeatures& l : level_features())
    if (l.level == level) {
      std::vector<std::string> features(l.features.begin(), l.features.end());
      return std::string(name(level)) + " (" + l.march +
             (features.empty() ? "" : ": " + join(features, ", ")) + ")";
    }
  return name(level);
}

std::optional<Level> parse(std::string_view text) {
  for (const LevelFeatures& l : level_features())
    if (text == name(l.level)) return l.level;
  return std::nullopt;
}

std::vector<Level> platform_levels() {
  std::vector<Level> levels;
  for (const LevelFeatures& l : level_features()) levels.push_back(l.level);
  return levels;
}

std::vector<std::string> missing_features(Level level) {
  std::vector<std::string> missing;
  for (const LevelFeatures& l : level_features())
    if (l.level <= level)
      for (const char* f : l.features)
        if (!cpu_has(f)) missing.emplace_back(f);
  return missing;
}

Level cpu_level() {
  static const Level level = [] {
    Level best = Level::portable;  // the build's floor: this process would not have started
    for (const LevelFeatures& l : level_features())
      if (missing_features(l.level).empty()) best = std::max(best, l.level);
    return best;
  }();
  return level;
}

std::vector<std::string> cpu_features() {
  std::vector<std::string> found;
  for (const LevelFeatures& l : level_features())
    for (const char* f : l.features)
      if (cpu_has(f)) found.emplace_back(f);
  return found;
}

Level build_level() {
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512CD__) && \
    defined(__AVX512DQ__) && defined(__AVX512VL__)
  return Level::avx512;
#elif defined(__AVX2__) && defined(__FMA__) && defined(__BMI2__)
  return Level::avx2;
#else
  return Level::portable;
#endif
}

void check_build_runs() {
  const Level built = build_level();
  if (built <= cpu_level()) return;
  std::vector<std::string> missing = missing_features(built);
  throw Error(std::string("this dtnn was compiled for ") + describe(built) +
              " (-DDTNN_NATIVE=ON on another machine?), and this CPU lacks " + join(missing, ", ") +
              "; rebuild it here, or without DTNN_NATIVE");
}

Level ceiling_for(std::string_view wanted, Level cpu, std::string_view where) {
  if (wanted == "auto") return cpu;
  std::vector<std::string> names{"auto"};
  for (Level l : platform_levels()) names.emplace_back(name(l));
  const std::optional<Level> level = parse(wanted);
  if (!level)
    throw Error(std::string(where) + "=" + std::string(wanted) +
                ": not an instruction-set level; expected one of " + join(names, ", "));
  if (*level > cpu) {
    std::vector<std::string> runs;
    for (Level l : platform_levels())
      if (l <= cpu) runs.emplace_back(name(l));
    const std::vector<std::string> missing = missing_features(*level);
    throw Error(std::string(where) + "=" + std::string(wanted) + ": this CPU does not have " +
                name(*level) +
                (missing.empty() ? std::string() : " (it lacks " + join(missing, ", ") + ")") +
                "; it runs " + join(runs, ", ") + " (a ceiling can only lower the level)");
  }
  return *level;
}

Level ceiling() {
  static const std::optional<std::string> env = [] {
    const char* v = std::getenv("DTNN_ISA");
    return v && *v ? std::optional<std::string>(v) : std::nullopt;
  }();
  if (!env) return cpu_level();
  return ceiling_for(*env, cpu_level(), "DTNN_ISA");  // cheap; throws again for a bad value
}

std::optional<Level> best_of(const std::vector<Level>& built, Level limit) {
  std::optional<Level> best;
  for (Level l : built)
    if (l <= limit && (!best || l > *best)) best = l;
  return best;
}

void record_choice(Choice choice) {
  Families& f = families();
  std::lock_guard<std::mutex> lock(f.mutex);
  std::string key = choice.family;
  f.plugins[key] = std::move(choice);
}

void register_family(std::string family, std::vector<Level> built) {
  Families& f = families();
  std::lock_guard<std::mutex> lock(f.mutex);
  f.library[std::move(family)] = std::move(built);
}

std::vector<Choice> choices() {
  const Level limit = ceiling();
  Families& f = families();
  std::lock_guard<std::mutex> lock(f.mutex);
  std::vector<Choice> out;
  for (const auto& [family, built] : f.library)
    out.push_back({family, built, best_of(built, limit)});
  for (const auto& [family, choice] : f.plugins) out.push_back(choice);
  std::sort(out.begin(), out.end(),
            [](const Choice& a, const Choice& b) { return a.family < b.family; });
  return out;
}

}  // namespace dtnn::isa
