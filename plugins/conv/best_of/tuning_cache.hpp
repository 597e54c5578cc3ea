// best_of's tuning cache: a JSON file of the choices made per key (CPU, BLIS kernels, threads,
// candidate builds, layer shape), so that a later run with the same key tunes nothing.
//
//   {"entries": {key: {"choice": name, "median_ms": {name: ms, ...},
//                      "rel_error": {name: error, ...}}, ...}}
//
// The file is shared by every run of a user and written by other versions of dtnn, so reading
// never fails a run: a missing file is an empty cache, a file that is something else (not JSON,
// not this shape, a directory, too deep) is left alone (neither read nor written) with the reason
// in problem(), and an entry of the wrong shape is no entry. tests/fuzz/fuzz_tuning_cache.cpp
// feeds it arbitrary bytes.
#pragma once
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

namespace dtnn::best_of {

class TuningCache {
 public:
  // The cache in file's bytes, or the cache the file's text holds.
  static TuningCache read(const std::filesystem::path& file);
  static TuningCache parse(const std::string& text, const std::string& where);

  // False when the file is not a tuning cache: nothing is read from it or written to it.
  bool usable() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }

  // The choice cached for key, or "" when there is none.
  std::string choice(const std::string& key) const;

  // Sets key's entry (replacing any), when usable(): the choice, each candidate's median step and
  // the relative errors measured (none without the accuracy guard).
  void set(const std::string& key, const std::string& choice,
           const std::map<std::string, double>& median_ms,
           const std::map<std::string, double>& rel_error = {});

  // The file's text. Keys that are not UTF-8 are written with U+FFFD in place of bad bytes.
  std::string text() const;

  // Writes text() to file atomically (dtnn/file_io.hpp); throws dtnn::Error on failure.
  void write(const std::filesystem::path& file) const;

 private:
  nlohmann::json json_ = {{"entries", nlohmann::json::object()}};
  std::string problem_;
};

}  // namespace dtnn::best_of
