// Whole-file reads for dataset plugins: gzip'd files are decompressed on the way (zlib reads plain
// files unchanged), and a corrupt or truncated stream is an error naming the file.
#pragma once
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "dtnn/error.hpp"

namespace dtnn::datasets {

inline std::vector<std::uint8_t> read_file(const std::filesystem::path& file) {
  gzFile f = gzopen(file.c_str(), "rb");
  if (!f) throw Error(file.string() + ": cannot open");
  std::vector<std::uint8_t> out;
  std::vector<std::uint8_t> buf(1 << 16);
  int got;
  while ((got = gzread(f, buf.data(), static_cast<unsigned>(buf.size()))) > 0)
    out.insert(out.end(), buf.begin(), buf.begin() + got);
  int err = 0;
  const char* msg = gzerror(f, &err);
  const std::string why = got < 0 ? std::string(msg ? msg : "read error") : "";
  gzclose(f);
  if (got < 0)
    throw Error(file.string() + ": corrupt or truncated gzip data after " +
                std::to_string(out.size()) + " decompressed bytes (" + why + ")");
  return out;
}

}  // namespace dtnn::datasets
