// Content digests: FNV-1a (64-bit) of a byte range, and of a file's bytes as 16 hex digits. Used to
// detect damaged checkpoints and rebuilt plugins (best_of's tuning cache keys), not for security.
#pragma once
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

inline constexpr std::uint64_t kFnv1aStart = 0xcbf29ce484222325ULL;

// FNV-1a of [data, data + n), continuing from h.
inline std::uint64_t fnv1a(const void* data, std::size_t n, std::uint64_t h = kFnv1aStart) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ULL;
  }
  return h;
}

// FNV-1a of the file's bytes as 16 hex digits, read once per path and process (later calls give
// the first result). Throws dtnn::Error when the file cannot be read.
DTNN_CORE_EXPORT std::string file_digest(const std::filesystem::path& file);

}  // namespace dtnn
