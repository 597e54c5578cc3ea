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

std::string describe_file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "is a directory";
  if (S_ISFIFO(mode)) return "is a named pipe";
  if (S_ISCHR(mode)) return "is a character device";
  if (S_ISBLK(mode)) return "is a block device";
  if (S_ISSOCK(mode)) return "is a socket";
  return "is not a regular file";
}

// The folder that holds path (the working folder for a bare name).
fs::path folder_of(const fs::path& path) {
  return path.has_parent_path() ? path.parent_path() : fs::path(".");
}

// Writes all of text to fd, retrying after signals; 0, or the errno of the write that failed
// (`done` then says how far it got).
int write_all(int fd, const std::string& text, std::size_t& done) {
  done = 0;
  while (done < text.size()) {
    const ssize_t w = ::write(fd, text.data() + done, text.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    done += static_cast<std::size_t>(w);
  }
  return 0;
}

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

int open_regular_file(const fs::path& file) {
  // O_NONBLOCK: opening a named pipe for reading otherwise waits for a writer.
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(file.string() + ": cannot open (" + system_reason(errno) + ")");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const mode_t mode = st.st_mode;
    ::close(fd);
    throw Error(file.string() + ": " + describe_file_type(mode) + ", expected a regular file");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

std::string read_file(const fs::path& file, std::size_t max_bytes) {
  const int fd = open_regular_file(file);
  struct stat st {};
  ::fstat(fd, &st);
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

namespace {

// What an output path names once its symbolic links are followed: the path itself when it is no
// link, else the link's target, resolved against the link's folder, link after link.
fs::path follow_links(const fs::path& file) {
  fs::path at = file;
  for (int hops = 0;; ++hops) {
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return at;
    if (hops == 40) throw Error(file.string() + ": more than 40 symbolic links in a row (a loop?)");
    std::error_code ec;
    const fs::path target = fs::read_symlink(at, ec);
    if (ec) throw Error(file.string() + ": cannot read the symbolic link (" + ec.message() + ")");
    at = target.is_absolute() ? target : at.parent_path() / target;
  }
}

// Writes text to an open character device or pipe: no temporary file, no rename.
void write_stream(const fs::path& file, const fs::path& target, const std::string& text) {
  const int fd = ::open(target.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    throw Error(file.string() + ": cannot write (" +
                (e == ENXIO ? std::string("a named pipe that no one reads") : system_reason(e)) +
                ")");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::size_t done = 0;
  const int e = write_all(fd, text, done);
  ::close(fd);
  if (e != 0)
    throw Error(file.string() + ": write failed after " + std::to_string(done) + " bytes (" +
                system_reason(e) + ")");
}

// The kinds of file write_file_atomically never replaces: "" when target may be written.
std::string refused_output(const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return "is a directory, expected a file name";
  if (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return "";
  return describe_file_type(st.st_mode) +
         ": dtnn writes regular files, and streams to character devices and named pipes, only";
}

void write_replacing(const fs::path& file, const fs::path& target, const std::string& text,
                     const struct stat* previous) {
  fs::path tmp = target;
  tmp += ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(file.string() + ": cannot write (" + system_reason(errno) + ")");
  auto fail = [&](const std::string& what, int error) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw Error(file.string() + ": " + what + " (" + system_reason(error) +
                "); the previous file, if any, is unchanged");
  };
  if (previous) ::fchmod(fd, previous->st_mode & 07777);  // the file keeps its permissions
  std::size_t done = 0;
  if (const int e = write_all(fd, text, done); e != 0)
    fail("write failed after " + std::to_string(done) + " bytes", e);
  if (::fsync(fd) != 0) fail("cannot flush to disk", errno);
  if (::close(fd) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw Error(file.string() + ": cannot flush to disk (" + system_reason(e) +
                "); the previous file, if any, is unchanged");
  }
  if (::rename(tmp.c_str(), target.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw Error(file.string() + ": cannot replace (" + system_reason(e) + ")");
  }
  // The rename itself reaches the disk with the folder's entry.
  if (const int dir = ::open(folder_of(target).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace

void write_file_atomically(const fs::path& file, const std::string& text) {
  ignore_file_size_signal();
  const fs::path target = follow_links(file);
  struct stat st {};
  if (::stat(target.c_str(), &st) != 0) {
    if (errno != ENOENT)
      throw Error(file.string() + ": cannot write (" + system_reason(errno) + ")");
    write_replacing(file, target, text, nullptr);
    return;
  }
  if (const std::string why = refused_output(st); !why.empty())
    throw Error(file.string() + ": " + why);
  if (S_ISREG(st.st_mode))
    write_replacing(file, target, text, &st);
  else
    write_stream(file, target, text);
}

void check_output_file(const fs::path& file, const std::string& key) {
  const std::string where = key + ": " + file.string();
  if (file.empty()) throw Error(key + ": an empty file name");
  const fs::path target = follow_links(file);
  struct stat st {};
  if (::stat(target.c_str(), &st) == 0) {
    if (const std::string why = refused_output(st); !why.empty()) throw Error(where + ": " + why);
    if (!S_ISREG(st.st_mode)) return;  // a stream: written in place
  } else if (errno != ENOENT) {
    throw Error(where + ": cannot write (" + system_reason(errno) + ")");
  }
  // A new or replaced file is made in its folder.
  const fs::path folder = folder_of(target);
  struct stat dir {};
  if (::stat(folder.c_str(), &dir) != 0)
    throw Error(where + ": its folder " + folder.string() + " does not exist");
  if (!S_ISDIR(dir.st_mode)) throw Error(where + ": " + folder.string() + " is not a folder");
  if (::access(folder.c_str(), W_OK) != 0)
    throw Error(where + ": cannot write in " + folder.string() + " (" + system_reason(errno) + ")");
}

std::string safe_file_name(std::string_view name) {
  std::string out;
  for (const char c : name) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '+' || c == '-';
    out.push_back(plain && !(c == '.' && out.empty()) ? c : '_');
  }
  return out.empty() ? "_" : out;
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
