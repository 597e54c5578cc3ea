// Memory for tensors and workspaces: 64-byte aligned; blocks of 2 MiB or more are aligned to
// 2 MiB and asked to be backed by transparent huge pages (madvise), which the kernel grants under
// the default THP setting "madvise" (a ResNet-20 run then holds 226 of its 274 MiB in huge
// pages). Large activations and conv workspaces are walked with big strides; 2 MiB pages spare
// the TLB misses of 4 KiB ones. On the shared 2-core development machine the effect on training
// speed was within its run-to-run noise, so this is a default, not a measured win.
#pragma once
#include <cstddef>
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

// Never null: throws std::bad_alloc. Release with std::free.
DTNN_CORE_EXPORT std::byte* allocate_aligned(std::size_t bytes);

// This machine's physical memory in bytes.
DTNN_CORE_EXPORT std::size_t physical_memory_bytes();

// Throws an Error naming `what` when bytes exceed physical memory: a size read from a file or a
// config is refused before it is allocated (Linux would grant it and the OOM killer end the run).
DTNN_CORE_EXPORT void check_fits_in_memory(std::size_t bytes, const std::string& what);

}  // namespace dtnn
