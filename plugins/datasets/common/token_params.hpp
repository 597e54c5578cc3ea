// What the token datasets (text, seq2seq, text_classes) read from their parameters alike: the
// kind of tokens, the test split's spacing, and a folder's files by name pattern.
#pragma once
#include <fnmatch.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/params.hpp"

namespace dtnn::datasets {

// "tokens": "char", "byte" or "vocab", which needs "vocabulary" (a file).
inline std::string token_kind(const Params& p) {
  const std::string tokens = p.get_string("tokens");
  if (tokens != "char" && tokens != "byte" && tokens != "vocab")
    p.fail("tokens", "\"char\", \"byte\" or \"vocab\" (with \"vocabulary\": a file)");
  if (tokens == "vocab" && p.get_string("vocabulary").empty())
    p.fail("vocabulary", "a vocabulary file (one token per line) for \"tokens\": \"vocab\"");
  return tokens;
}

// "test_every": every test_every-th sample is the test split; 0, none.
inline std::int64_t test_every(const Params& p) {
  const std::int64_t every = p.get_int("test_every");
  if (every < 0 || every == 1) p.fail("test_every", "0 (no test split) or an integer >= 2");
  return every;
}

// Whether sample `i` (counted in order) falls in the test split.
inline bool is_test(std::int64_t i, std::int64_t every) {
  return every > 0 && i % every == every - 1;
}

// The regular files of folder (symbolic links skipped) whose names match "include" and not
// "exclude" (shell patterns), in name order.
inline std::vector<std::filesystem::path> matching_files(const Params& p,
                                                         const std::filesystem::path& folder) {
  const std::string include = p.get_string("include"), exclude = p.get_string("exclude");
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(folder, ec)) {
    if (e.is_symlink() || !e.is_regular_file()) continue;
    const std::string name = e.path().filename().string();
    if (fnmatch(include.c_str(), name.c_str(), 0) != 0) continue;
    if (!exclude.empty() && fnmatch(exclude.c_str(), name.c_str(), 0) == 0) continue;
    files.push_back(e.path());
  }
  if (ec) throw Error(p.key_path("path") + ": " + folder.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace dtnn::datasets
