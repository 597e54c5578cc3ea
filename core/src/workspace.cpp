#include "dtnn/workspace.hpp"

#include <cstdlib>
#include <new>

namespace dtnn {

void Workspace::Free::operator()(std::byte* p) const { std::free(p); }

void Workspace::reserve(std::size_t bytes) {
  if (bytes <= bytes_) return;
  const std::size_t rounded = (bytes + 63) / 64 * 64;
  auto* p = static_cast<std::byte*>(std::aligned_alloc(64, rounded));
  if (!p) throw std::bad_alloc();
  data_.reset(p);  // nothing in it needs keeping: reservations happen before any pass
  bytes_ = bytes;
  user_ = nullptr;
}

}  // namespace dtnn
