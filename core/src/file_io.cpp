#include "dtnn/file_io.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>

#include "dtnn/error.hpp"
#include "dtnn/memory.hpp"

namespace dtnn {

namespace fs = std::filesystem;

namespace {

std::string system_reason(int error) { return std::strerror(error); }

// Writing past RLIMIT_FSIZE raises SIGXFSZ, whose default action ends the process with no
// message; ignored, the write fails with EFBIG and gets the error every other write failure gets.
void ignore_file_size_signal() {
  static const bool once = [] {
    ::signal(SIGXFSZ, SIG_IGN);
    return true;
  }();
  (void)once;
}

}  // namespace

std::string read_file(const fs::path& file, std::size_t max_bytes) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(file.string() + ": cannot open (" + system_reason(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool directory = S_ISDIR(st.st_mode);
    ::close(fd);
    throw Error(file.string() +
                (directory ? ": is a directory, expected a file" : ": not a regular file"));
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size > max_bytes) {
    ::close(fd);
    throw Error(file.string() + ": " + std::to_string(size) + " bytes, more than the " +
                std::to_string(max_bytes) + " such a file may hold");
  }
  try {
    check_fits_in_memory(size, "reading it");
  } catch (const Error& e) {
    ::close(fd);
    throw Error(file.string() + ": " + e.what());
  }
  std::string bytes(size, '\0');
  std::size_t done = 0;
  while (done < size) {
    const ssize_t got = ::read(fd, bytes.data() + done, size - done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      const int e = got < 0 ? errno : 0;
      ::close(fd);
      throw Error(file.string() + ": read error after " + std::to_string(done) + " of " +
                  std::to_string(size) + " bytes" + (e ? " (" + system_reason(e) + ")" : ""));
    }
    done += static_cast<std::size_t>(got);
  }
  ::close(fd);
  return bytes;
}

void write_file_atomically(const fs::path& file, const std::string& text) {
  ignore_file_size_signal();
  fs::path tmp = file;
  tmp += ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(file.string() + ": cannot write (" + system_reason(errno) + ")");
  auto fail = [&](const std::string& what, int error) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(file.string() + ": " + what + " (" + system_reason(error) +
                "); the previous file, if any, is unchanged");
  };
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) fail("write failed after " + std::to_string(done) + " bytes", errno);
    done += static_cast<std::size_t>(w);
  }
  if (::fsync(fd) != 0) fail("cannot flush to disk", errno);
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw Error(file.string() + ": cannot flush to disk (" + system_reason(e) +
                "); the previous file, if any, is unchanged");
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw Error(file.string() + ": cannot replace (" + system_reason(e) + ")");
  }
  // The rename itself reaches the disk with the folder's entry.
  const fs::path folder = file.has_parent_path() ? file.parent_path() : fs::path(".");
  if (const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

int remove_stale_temporaries(const fs::path& folder) {
  static const std::regex pattern(R"(.+\.tmp\.(\d+))");
  std::error_code ec;
  int removed = 0;
  for (const auto& e : fs::directory_iterator(folder, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, m, pattern)) continue;
    const long pid = std::strtol(m[1].str().c_str(), nullptr, 10);
    if (pid == ::getpid()) continue;
    // A live writer's (kill answers, or refuses: another user's process) stays.
    if (pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;
    if (fs::remove(e.path(), ec)) ++removed;
  }
  return removed;
}

}  // namespace dtnn
