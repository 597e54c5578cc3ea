// Whole-file reads and crash-safe writes: the one place dtnn opens the files it reads and writes
// whole (experiments, models, checkpoints, npz, histories, tuning caches), so every such file gets
// the same checks and the same error text.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

// The bytes of a regular file. Errors name the file and say why: missing, a directory, not
// readable, larger than max_bytes (a header is never trusted for more than the file holds, and a
// file over memory is refused before it is read).
DTNN_CORE_EXPORT std::string read_file(const std::filesystem::path& file,
                                       std::size_t max_bytes = static_cast<std::size_t>(-1));

// Writes text to file atomically: a temporary file beside it (file.tmp.<pid>), fsync, rename. A
// crash, a full disk or a write error never leaves half a file, and the previous file stays
// intact: the error names the file and the system's reason, and the temporary file is removed.
DTNN_CORE_EXPORT void write_file_atomically(const std::filesystem::path& file,
                                            const std::string& text);

// Removes the temporary files that writes interrupted by a crash left in folder (names ending in
// .tmp.<pid> of a process that no longer runs). Returns how many were removed.
DTNN_CORE_EXPORT int remove_stale_temporaries(const std::filesystem::path& folder);

}  // namespace dtnn
