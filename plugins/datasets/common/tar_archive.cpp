#include "tar_archive.hpp"

#include <algorithm>
#include <cstring>

#include "dtnn/error.hpp"
#include "read_file.hpp"

namespace dtnn::datasets {

bool is_tar_archive(const std::filesystem::path& p) {
  const std::string s = p.filename().string();
  return s.ends_with(".tar.gz") || s.ends_with(".tgz") || s.ends_with(".tar");
}

std::map<std::string, std::vector<std::uint8_t>> untar(const std::filesystem::path& archive) {
  const std::vector<std::uint8_t> bytes = read_file(archive);
  std::map<std::string, std::vector<std::uint8_t>> files;
  std::size_t at = 0;
  while (at + 512 <= bytes.size()) {
    const std::uint8_t* h = bytes.data() + at;
    if (std::all_of(h, h + 512, [](std::uint8_t b) { return b == 0; })) break;  // end of archive
    // The checksum: the header's bytes summed with its own 8-byte field taken as spaces.
    unsigned sum = 0;
    for (int i = 0; i < 512; ++i) sum += (i >= 148 && i < 156) ? ' ' : h[i];
    auto octal = [&](int offset, int width) {
      std::uint64_t v = 0;
      for (int i = offset; i < offset + width && h[i] >= '0' && h[i] <= '7'; ++i)
        v = v * 8 + (h[i] - '0');
      return v;
    };
    int first = 148;
    while (first < 156 && h[first] == ' ') ++first;
    if (octal(first, 156 - first) != sum)
      throw Error(archive.string() +
                  ": not a tar archive, or corrupt: bad header checksum at byte " +
                  std::to_string(at) + " (of the decompressed archive)");
    auto field = [&](int offset, std::size_t width) {
      return std::string(reinterpret_cast<const char*>(h + offset),
                         strnlen(reinterpret_cast<const char*>(h + offset), width));
    };
    std::string name = field(0, 100);
    if (std::memcmp(h + 257, "ustar", 5) == 0 && h[345] != 0)  // ustar: a prefix for long names
      name = field(345, 155) + "/" + name;
    while (name.starts_with("./")) name.erase(0, 2);
    const std::uint64_t size = octal(124, 12);
    const char type = static_cast<char>(h[156]);
    at += 512;
    if (at + size > bytes.size())
      throw Error(archive.string() + ": truncated: member '" + name + "' needs " +
                  std::to_string(size) + " bytes from byte " + std::to_string(at) +
                  ", the archive " + "holds " + std::to_string(bytes.size() - at));
    if (type == '0' || type == '\0') {
      const auto [member, fresh] = files.try_emplace(name);
      if (!fresh)
        throw Error(archive.string() + ": the member '" + name + "' again at byte " +
                    std::to_string(at - 512) +
                    ": an archive that holds a path twice is refused (which copy is meant?)");
      member->second.assign(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                            bytes.begin() + static_cast<std::ptrdiff_t>(at + size));
    }
    at += (size + 511) / 512 * 512;
  }
  return files;
}

std::vector<std::uint8_t> take_member(std::map<std::string, std::vector<std::uint8_t>>& files,
                                      const std::filesystem::path& archive,
                                      const std::string& folder, const std::string& name) {
  for (const std::string& path : {folder + "/" + name, name})
    if (auto it = files.find(path); it != files.end()) return std::move(it->second);
  throw Error(archive.string() + ": the archive holds no " + folder + "/" + name + " (nor " + name +
              " at its top level)");
}

}  // namespace dtnn::datasets
