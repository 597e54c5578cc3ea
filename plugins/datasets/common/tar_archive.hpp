// The regular files of a tar archive (gzip'd or not), read whole into memory by base name; a bad
// header checksum or a truncated member is an error naming the archive and the byte offset.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace dtnn::datasets {

bool is_tar_archive(const std::filesystem::path& p);  // .tar, .tar.gz, .tgz
std::map<std::string, std::vector<std::uint8_t>> untar(const std::filesystem::path& archive);

}  // namespace dtnn::datasets
