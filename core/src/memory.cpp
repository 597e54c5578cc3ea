#include "dtnn/memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "dtnn/error.hpp"

namespace dtnn {

std::byte* allocate_aligned(std::size_t bytes) {
  constexpr std::size_t kLine = 64, kHuge = std::size_t{2} << 20;
  const std::size_t alignment = bytes >= kHuge ? kHuge : kLine;
  const std::size_t rounded =
      (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p) throw std::bad_alloc();
  if (alignment == kHuge) ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
  return static_cast<std::byte*>(p);
}

std::size_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return SIZE_MAX;  // unknown: no limit
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

void check_fits_in_memory(std::size_t bytes, const std::string& what) {
  const std::size_t limit = physical_memory_bytes();
  if (bytes <= limit) return;
  auto gib = [](std::size_t b) { return std::to_string(b / (std::size_t{1} << 30)) + " GiB"; };
  throw Error(what + " needs " + std::to_string(bytes) + " bytes (" + gib(bytes) +
              "), more than this machine's memory (" + gib(limit) + ")");
}

}  // namespace dtnn
