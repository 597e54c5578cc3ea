// Whole-file reads for dataset plugins: gzip'd files are decompressed on the way (zlib reads plain
// files unchanged), and a corrupt or truncated stream is an error naming the file, as is a path
// that is no regular file (a named pipe is refused, not waited on). At most
// kMaxDatasetFileBytes are read: a gzip stream that inflates past that (the CIFAR-10 archive
// holds 180 MB) is refused before it takes the machine's memory.
#pragma once
#include <unistd.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"

namespace dtnn::datasets {

inline constexpr std::size_t kMaxDatasetFileBytes = std::size_t{1} << 30;

inline std::vector<std::uint8_t> read_file(const std::filesystem::path& file) {
  const int fd = open_regular_file(file);  // a folder, a pipe or a device: refused at once
  gzFile f = gzdopen(fd, "rb");
  if (!f) {
    ::close(fd);
    throw Error(file.string() + ": cannot open");
  }
  std::vector<std::uint8_t> out;
  std::vector<std::uint8_t> buf(1 << 16);
  int got;
  while ((got = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0) {
    if (out.size() + static_cast<std::size_t>(got) > kMaxDatasetFileBytes) {
      gzclose(f);
      throw Error(file.string() + ": more than " + std::to_string(kMaxDatasetFileBytes >> 20) +
                  " MiB (decompressed): not a dataset file dtnn reads whole");
    }
    out.insert(out.end(), buf.begin(), buf.begin() + got);
  }
  // gzread ends a truncated stream like a complete one (0), and says so only through gzerror:
  // Z_BUF_ERROR, "unexpected end of file".
  int err = Z_OK;
  const char* msg = gzerror(f, &err);
  const std::string why = msg && *msg ? msg : "read error";
  gzclose(f);
  if (got < 0 || (err != Z_OK && err != Z_STREAM_END))
    throw Error(file.string() + ": corrupt or truncated gzip data after " +
                std::to_string(out.size()) + " decompressed bytes (" + why + ")");
  return out;
}

}  // namespace dtnn::datasets
