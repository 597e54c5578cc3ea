// Memory for tensors and workspaces: 64-byte aligned; blocks of 2 MiB or more are aligned to
// 2 MiB and asked to be backed by transparent huge pages (madvise), which the kernel grants under
// the default THP setting "madvise". With 4 KiB pages, the physical pages a run gets decide which
// cache sets its buffers share, and the same layer ran up to twice as slow in some processes as
// in others; huge pages make that placement the same in every run and spare TLB misses.
#pragma once
#include <cstddef>

#include "dtnn/core_export.hpp"

namespace dtnn {

// Never null: throws std::bad_alloc. Release with std::free.
DTNN_CORE_EXPORT std::byte* allocate_aligned(std::size_t bytes);

}  // namespace dtnn
