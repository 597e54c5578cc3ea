// Where the running program is: dtnn looks beside it for its plugins (lib/dtnn/plugins) and its
// model zoo (share/dtnn/configs/models), so an install or a bundle (scripts/gpu-bundle.sh) may
// move.
#pragma once
#include <filesystem>

#include "dtnn/core_export.hpp"

namespace dtnn {

// The folder of the running executable; "" where /proc/self/exe cannot be read.
DTNN_CORE_EXPORT std::filesystem::path executable_dir();

}  // namespace dtnn
