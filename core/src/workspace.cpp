#include "dtnn/workspace.hpp"

#include <cstdlib>

#include "dtnn/memory.hpp"

namespace dtnn {

void Workspace::Free::operator()(std::byte* p) const { std::free(p); }

void Workspace::reserve(std::size_t bytes) {
  if (bytes <= bytes_) return;
  check_fits_in_memory(bytes, "the layers' scratch workspace");
  data_.reset(
      allocate_aligned(bytes));  // nothing in it needs keeping: reservations happen before any pass
  bytes_ = bytes;
  user_ = nullptr;
}

}  // namespace dtnn
