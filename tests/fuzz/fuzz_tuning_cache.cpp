// best_of's tuning cache (plugins/conv/best_of/tuning_cache.hpp). The input's first line is the key
// a run looks up, the rest the cache file's bytes. Reading must never fail a run: any input gives a
// cache, usable or not. A usable one must take the run's new choice and give it back after its text
// is read again, with the other entries' choices unchanged.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "tuning_cache.hpp"

namespace {
bool is_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using dtnn::best_of::TuningCache;
  const std::string input = dtnn::fuzz::text(data, size);
  const std::size_t newline = input.find('\n');
  const std::string key = newline == std::string::npos ? "" : input.substr(0, newline);
  const std::string file = newline == std::string::npos ? input : input.substr(newline + 1);

  TuningCache cache = TuningCache::parse(file, "fuzz.json");
  if (!cache.usable()) {
    if (cache.problem().empty()) std::abort();  // refused without a reason
    return 0;
  }
  const std::string other = key + "/other";
  const std::string other_choice = cache.choice(other);
  (void)cache.choice(key);
  cache.set(key, "i2c", {{"i2c", 1.5}, {"gemm", 2.5}});
  const TuningCache again = TuningCache::parse(cache.text(), "fuzz.json (written)");
  if (!again.usable()) std::abort();
  // A key that is not UTF-8 is written with replacement characters: it is a different key then.
  const bool key_kept = is_utf8(key);
  if (key_kept && again.choice(key) != "i2c") std::abort();
  if (key_kept && again.choice(other) != other_choice) std::abort();
  return 0;
}
