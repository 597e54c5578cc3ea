#include "dtnn/digest.hpp"

#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <vector>

#include "dtnn/error.hpp"

namespace dtnn {

std::string file_digest(const std::filesystem::path& file) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, std::string> known;
  const std::lock_guard lock(mutex);
  if (auto it = known.find(file); it != known.end()) return it->second;
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file.string() + ": cannot be read (computing its digest)");
  std::uint64_t h = kFnv1aStart;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    h = fnv1a(buffer.data(), static_cast<std::size_t>(in.gcount()), h);
  }
  if (in.bad()) throw Error(file.string() + ": read error (computing its digest)");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return known[file] = hex;
}

}  // namespace dtnn
