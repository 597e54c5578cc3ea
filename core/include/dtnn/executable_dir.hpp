// Where the running program and the core library are: dtnn looks beside them for its plugins
// (lib/dtnn/plugins) and its model zoo (share/dtnn/configs/models), so an install, a bundle
// (scripts/gpu-bundle.sh) or a pip-installed package may move.
#pragma once
#include <filesystem>

#include "dtnn/core_export.hpp"

namespace dtnn {

// The folder of the running executable; "" where /proc/self/exe cannot be read.
DTNN_CORE_EXPORT std::filesystem::path executable_dir();
// The folder of the dtnn core library this process loaded (an install's or a Python package's
// lib/, wherever the program is: python3 for the module); "" where it cannot be told.
DTNN_CORE_EXPORT std::filesystem::path core_library_dir();

}  // namespace dtnn
