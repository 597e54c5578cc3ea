// Whole-file reads and crash-safe writes: the one place dtnn opens the files it reads and writes
// whole (experiments, models, checkpoints, npz, histories, tuning caches), so every such file gets
// the same checks and the same error text.
#pragma once
#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include "dtnn/core_export.hpp"

namespace dtnn {

// A descriptor of a regular file open for reading (O_CLOEXEC; the caller closes it). A named pipe,
// a device or a folder is refused without waiting on it (opening a pipe no one writes to would
// block for ever); the error names the file and what it is.
DTNN_CORE_EXPORT int open_regular_file(const std::filesystem::path& file);

// The bytes of a regular file. Errors name the file and say why: missing, a directory, not
// readable, larger than max_bytes (a header is never trusted for more than the file holds, and a
// file over memory is refused before it is read).
DTNN_CORE_EXPORT std::string read_file(const std::filesystem::path& file,
                                       std::size_t max_bytes = static_cast<std::size_t>(-1));

// Writes text to an output file. A symbolic link is followed (the link stays, its target gets the
// text). A regular file, or a name not yet taken, is written atomically: a temporary file beside
// it (file.tmp.<pid>), fsync, rename; a crash, a full disk or a write error never leaves half a
// file, the previous file stays intact (and its permissions pass to the new one), and the
// temporary file is removed. A character device or a named pipe (/dev/null, /dev/stdout, a FIFO
// a reader has open) is written as a stream, never replaced. A folder, a block device, a socket
// or a pipe with no reader is refused. Errors name the file and the reason.
DTNN_CORE_EXPORT void write_file_atomically(const std::filesystem::path& file,
                                            const std::string& text);

// Checks, before any work, that write_file_atomically(file, ...) can succeed as far as can be
// known: the file is not a folder or a device it refuses, its folder exists and is writable. The
// error names `key` (e.g. "output.history") and the file.
DTNN_CORE_EXPORT void check_output_file(const std::filesystem::path& file, const std::string& key);

// `name` made safe to be one component of a file name: every character but letters, digits and
// . _ + - becomes '_', and a leading '.' too (so "..", "x/../../y" and ".hidden" stay where they
// are put). Names that come from files (a model's name) pass through it before they reach a path.
DTNN_CORE_EXPORT std::string safe_file_name(std::string_view name);

// Removes the temporary files that writes interrupted by a crash left in folder (names ending in
// .tmp.<pid> of a process that no longer runs). Returns how many were removed.
DTNN_CORE_EXPORT int remove_stale_temporaries(const std::filesystem::path& folder);

}  // namespace dtnn
