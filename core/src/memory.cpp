#include "dtnn/memory.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <new>

namespace dtnn {

std::byte* allocate_aligned(std::size_t bytes) {
  constexpr std::size_t kLine = 64, kHuge = std::size_t{2} << 20;
  const std::size_t alignment = bytes >= kHuge ? kHuge : kLine;
  const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  void* p = std::aligned_alloc(alignment, rounded);
  if (!p) throw std::bad_alloc();
  if (alignment == kHuge) ::madvise(p, rounded, MADV_HUGEPAGE);  // a hint: failure is harmless
  return static_cast<std::byte*>(p);
}

}  // namespace dtnn
