// The regular files of a tar archive (gzip'd or not), read whole into memory by their path in the
// archive ("cifar-10-batches-bin/test_batch.bin"; ustar's long names included, a leading "./"
// dropped). A bad header checksum, a truncated member or a path that is in the archive twice (a
// later copy would silently replace the first) is an error naming the archive and the byte offset.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace dtnn::datasets {

bool is_tar_archive(const std::filesystem::path& p);  // .tar, .tar.gz, .tgz
std::map<std::string, std::vector<std::uint8_t>> untar(const std::filesystem::path& archive);

// The member at `folder`/`name` or at `name` (the archive's top level); an Error naming the
// archive and the paths looked for when neither is there. A member of that name elsewhere
// ("evil/test_batch.bin") is never taken.
std::vector<std::uint8_t> take_member(std::map<std::string, std::vector<std::uint8_t>>& files,
                                      const std::filesystem::path& archive,
                                      const std::string& folder, const std::string& name);

}  // namespace dtnn::datasets
