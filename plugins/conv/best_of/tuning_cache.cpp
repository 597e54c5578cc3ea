#include "tuning_cache.hpp"

#include <system_error>

#include "dtnn/config.hpp"
#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"

namespace dtnn::best_of {

namespace {
// A cache holds a few hundred entries of about 300 bytes; anything near this is not one.
constexpr std::size_t kMaxCacheBytes = std::size_t{64} << 20;
}  // namespace

TuningCache TuningCache::read(const std::filesystem::path& file) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) return TuningCache();
  try {
    return parse(read_file(file, kMaxCacheBytes), file.string());
  } catch (const Error& e) {  // a directory, unreadable, too large
    TuningCache cache;
    cache.problem_ = e.what();
    return cache;
  }
}

TuningCache TuningCache::parse(const std::string& text, const std::string& where) {
  TuningCache cache;
  try {
    cache.json_ = parse_json(text, where);
  } catch (const Error& e) {
    cache.problem_ = e.what();
    return cache;
  }
  if (!cache.json_.is_object() || !cache.json_.contains("entries") ||
      !cache.json_["entries"].is_object())
    cache.problem_ = where + ": expected a JSON object {\"entries\": {...}}";
  return cache;
}

std::string TuningCache::choice(const std::string& key) const {
  if (!usable()) return "";
  const nlohmann::json& entries = json_["entries"];
  const auto entry = entries.find(key);
  if (entry == entries.end() || !entry->is_object()) return "";
  const auto chosen = entry->find("choice");
  return chosen != entry->end() && chosen->is_string() ? chosen->get<std::string>() : "";
}

void TuningCache::set(const std::string& key, const std::string& choice,
                      const std::map<std::string, double>& median_ms,
                      const std::map<std::string, double>& rel_error) {
  if (!usable()) return;
  nlohmann::json entry = {{"choice", choice}, {"median_ms", nlohmann::json::object()}};
  for (const auto& [name, ms] : median_ms) entry["median_ms"][name] = ms;
  if (!rel_error.empty()) entry["rel_error"] = rel_error;
  json_["entries"][key] = std::move(entry);
}

std::string TuningCache::text() const {
  return json_.dump(1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

void TuningCache::write(const std::filesystem::path& file) const {
  if (!usable()) return;
  write_file_atomically(file, text());
}

}  // namespace dtnn::best_of
