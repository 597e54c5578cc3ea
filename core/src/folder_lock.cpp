#include "dtnn/folder_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "dtnn/error.hpp"

namespace dtnn {

FolderLock::FolderLock(const std::filesystem::path& folder, const std::string& purpose) {
  const std::filesystem::path file = folder / kFileName;
  fd_ = ::open(file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0)
    throw Error(purpose + ": " + file.string() + ": cannot open the folder's lock (" +
                std::strerror(errno) + ")");
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int e = errno;
    std::string holder(256, '\0');
    const ssize_t got = ::pread(fd_, holder.data(), holder.size() - 1, 0);
    holder.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
    ::close(fd_);
    fd_ = -1;
    if (e != EWOULDBLOCK)
      throw Error(purpose + ": " + file.string() + ": cannot lock (" + std::strerror(e) + ")");
    throw Error(purpose + ": " + folder.string() + " is in use by another run (" +
                (holder.empty() ? std::string("its lock file names no process") : holder) +
                "): two runs in one folder would overwrite and delete each other's files; "
                "wait for it or choose another folder");
  }
  char host[256] = "?";
  ::gethostname(host, sizeof host - 1);
  char when[32] = "";
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", &tm);
  const std::string me = "pid " + std::to_string(::getpid()) + " on " + host + ", since " + when;
  if (::ftruncate(fd_, 0) == 0) {
    [[maybe_unused]] const ssize_t w = ::pwrite(fd_, me.data(), me.size(), 0);
  }
}

FolderLock::~FolderLock() {
  if (fd_ >= 0) ::close(fd_);  // closing drops the flock
}

FolderLock::FolderLock(FolderLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

}  // namespace dtnn
