// Instruction-set dispatch: which levels this CPU runs, the ceiling a user may lower them to, and
// the variant each kernel family chose.
//
// Levels, in order (x86-64; elsewhere `portable` alone, the build's own target):
//   portable  x86-64-v2: SSE4.2, POPCNT (the default build's floor: core, and every plugin)
//   avx2      x86-64-v3: AVX, AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE
//   avx512    x86-64-v4: AVX-512 F, BW, CD, DQ, VL
// A level "runs" when the CPU and the OS (saved vector state, XCR0) support all of it and it is
// not above the ceiling: DTNN_ISA=portable|avx2|avx512|auto, which can only lower what the CPU
// runs; a level the CPU lacks is refused by name.
//
// Code built for a level above the floor comes two ways, both chosen here before any of it runs:
//   - a plugin built once per level (dtnn_add_plugin(... ISA_VARIANTS)): files kind_name.so,
//     kind_name.avx2.so, kind_name.avx512.so; the registry loads only the best one that runs;
//   - a kernel family inside a library (dtnn_add_isa_variants): a Family holds, per level, a
//     function returning that level's table of kernels; it calls only the one it chose.
// Nothing of a variant executes before the choice: no static initialiser of a variant's file,
// no table filled by its code.
#pragma once
#include <atomic>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn::isa {

enum class Level : int { portable = 0, avx2 = 1, avx512 = 2 };

DTNN_CORE_EXPORT const char* name(Level level);
// "portable (x86-64-v2: SSE4.2, POPCNT)" and so on.
DTNN_CORE_EXPORT std::string describe(Level level);
DTNN_CORE_EXPORT std::optional<Level> parse(std::string_view name);
// The levels this platform has variants for, lowest first (x86-64: all three).
DTNN_CORE_EXPORT std::vector<Level> platform_levels();

// The best level this CPU and OS run, and the ISA features found (for `dtnn info`).
DTNN_CORE_EXPORT Level cpu_level();
DTNN_CORE_EXPORT std::vector<std::string> cpu_features();
// The features of `level` the CPU lacks (empty when it runs it).
DTNN_CORE_EXPORT std::vector<std::string> missing_features(Level level);

// The level the core itself was compiled for: portable, unless built with -DDTNN_NATIVE=ON (then
// what the build machine had). check_build_runs() throws dtnn::Error, naming the features, when
// this CPU lacks it (a native build copied to an older machine), instead of a SIGILL later.
DTNN_CORE_EXPORT Level build_level();
DTNN_CORE_EXPORT void check_build_runs();

// The ceiling `wanted` ("auto" or a level name) gives on a CPU that runs up to `cpu`; `where`
// names the setting in errors (e.g. "DTNN_ISA"). Throws dtnn::Error for an unknown name or a
// level above `cpu`.
DTNN_CORE_EXPORT Level ceiling_for(std::string_view wanted, Level cpu, std::string_view where);
// The process's ceiling: cpu_level() lowered by DTNN_ISA when set (read once; a bad value throws
// dtnn::Error on every call).
DTNN_CORE_EXPORT Level ceiling();
// Whether code of `level` may run in this process.
inline bool runs(Level level) { return level <= ceiling(); }

// The best of `built` not above `limit`, if any.
DTNN_CORE_EXPORT std::optional<Level> best_of(const std::vector<Level>& built, Level limit);

// The variant each kernel family chose: the core's own families (chosen by the process's
// ceiling), and every plugin the registry loaded from per-level files (family "conv/winograd",
// chosen by that registry's ceiling). For `dtnn info` and the tests.
struct Choice {
  std::string family;
  std::vector<Level> built;     // lowest first
  std::optional<Level> chosen;  // none: nothing built runs here
};
// A plugin's choice; a family recorded twice keeps the last.
DTNN_CORE_EXPORT void record_choice(Choice choice);
// A library's family, whose choice follows the process's ceiling.
DTNN_CORE_EXPORT void register_family(std::string family, std::vector<Level> built);
// Every family, by name; a core family's choice needs the ceiling (a bad DTNN_ISA throws).
DTNN_CORE_EXPORT std::vector<Choice> choices();

// A kernel family inside a library: per level, a function returning that level's table (defined
// in the variant's own translation unit, compiled for that level). Only the chosen level's
// function is ever called. Families are declared at namespace scope of the library that owns
// them and list themselves for choices() when constructed; the constructor calls none of the
// variants' functions.
template <class Table>
class Family {
 public:
  using Getter = const Table& (*)();
  struct Variant {
    Level level;
    Getter table;
  };

  Family(const char* family, std::vector<Variant> variants)
      : name_(family), variants_(std::move(variants)) {
    register_family(name_, built());
  }

  // The best variant not above the process's ceiling (the floor, portable, is always built). The
  // ceiling is fixed once read, so the choice is made once.
  const Table& best() const {
    const Table* table = chosen_.load(std::memory_order_acquire);
    if (!table) {
      table = at(best_level());
      chosen_.store(table, std::memory_order_release);
    }
    return *table;
  }
  // The level best() takes.
  Level best_level() const { return *best_of(built(), ceiling()); }
  // The variant of `level`, or null when it is not built or does not run in this process.
  const Table* at(Level level) const {
    if (!runs(level)) return nullptr;
    for (const Variant& v : variants_)
      if (v.level == level) return &v.table();
    return nullptr;
  }
  std::vector<Level> built() const {
    std::vector<Level> levels;
    for (Level l : platform_levels())
      for (const Variant& v : variants_)
        if (v.level == l) levels.push_back(l);
    return levels;
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::vector<Variant> variants_;
  mutable std::atomic<const Table*> chosen_{nullptr};
};

}  // namespace dtnn::isa
