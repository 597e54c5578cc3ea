// FolderLock: one run at a time in a folder it writes and prunes (the checkpoint folder). Two runs
// started at once on one folder would overwrite each other's files and delete them by their
// keep-newest rules; the second is refused at start, told who holds the folder.
#pragma once
#include <filesystem>
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT FolderLock {
 public:
  // Takes an exclusive flock on folder/.dtnn.lock (made when missing) and writes this process's
  // pid, host and start time into it. When another process holds it: an Error naming the folder,
  // the holder, and `purpose` ("output.checkpoint_dir"). The lock ends with this object or the
  // process (the kernel drops it on exit, kill -9 included), so no stale lock is ever left.
  FolderLock(const std::filesystem::path& folder, const std::string& purpose);
  ~FolderLock();
  FolderLock(FolderLock&& other) noexcept;
  FolderLock& operator=(FolderLock&&) = delete;
  FolderLock(const FolderLock&) = delete;

  static constexpr const char* kFileName = ".dtnn.lock";

 private:
  int fd_ = -1;
};

}  // namespace dtnn
