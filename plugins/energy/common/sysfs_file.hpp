// Small files of sysfs (and of the fake trees tests write in their place): a value read whole,
// and a counter file kept open and read again at offset 0, which makes sysfs produce it afresh.
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "dtnn/error.hpp"

namespace dtnn::energy_files {

// The file's text without its trailing newline and blanks; throws dtnn::Error naming the file.
inline std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) throw Error("cannot read " + file.string() + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

// A decimal unsigned integer: all of text, at most 20 digits.
inline bool parse_unsigned(const std::string& text, std::uint64_t& value) {
  if (text.empty() || text.size() > 20) return false;
  value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const std::uint64_t digit = static_cast<std::uint64_t>(c - '0');
    if (value > (UINT64_MAX - digit) / 10) return false;
    value = value * 10 + digit;
  }
  return true;
}

class CounterFile {
 public:
  explicit CounterFile(std::filesystem::path file) : file_(std::move(file)) {
    fd_ = ::open(file_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      const int error = errno;
      throw Error("cannot read " + file_.string() + ": " + std::strerror(error) +
                  (error == EACCES ? " (energy counters are root's since Linux 5.10: run as root, "
                                     "or let a group read them)"
                                   : ""));
    }
    read();  // a file that opens but does not read a number fails here, not at the first step
  }
  ~CounterFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  CounterFile(const CounterFile&) = delete;
  CounterFile& operator=(const CounterFile&) = delete;
  CounterFile(CounterFile&& other) noexcept
      : file_(std::move(other.file_)), fd_(std::exchange(other.fd_, -1)) {}

  std::uint64_t read() const {
    char text[32];
    const ssize_t n = ::pread(fd_, text, sizeof text - 1, 0);
    if (n < 0) throw Error("cannot read " + file_.string() + ": " + std::strerror(errno));
    std::string s(text, static_cast<std::size_t>(n));
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    std::uint64_t value = 0;
    if (!parse_unsigned(s, value))
      throw Error(file_.string() + ": expected a counter (a decimal integer), got \"" + s + "\"");
    return value;
  }
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  int fd_ = -1;
};

// Joules from a counter that wraps around after range: adds each reading's advance, taking a
// smaller reading for a wrap.
class Unwrapped {
 public:
  Unwrapped(std::uint64_t first, std::uint64_t range) : last_(first), range_(range) {}
  // The total advance since the first reading, in the counter's units.
  double advance(std::uint64_t now) {
    const std::uint64_t step = now >= last_      ? now - last_
                               : range_ >= last_ ? range_ - last_ + now + 1
                                                 : now;  // a range below the last reading: a reset
    total_ += static_cast<double>(step);
    last_ = now;
    return total_;
  }

 private:
  std::uint64_t last_, range_;
  double total_ = 0;
};

}  // namespace dtnn::energy_files
