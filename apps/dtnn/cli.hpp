// The dtnn command as a library (dtnn_cli): the program (main.cpp) runs it, and so does the dtnn
// Python module (`python3 -m dtnn ...`), in whose process plugins written in Python live: the
// module hands the command its plugin folders and its in-process plugins (set_registry_extension)
// before it calls run.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "dtnn/registry.hpp"

namespace dtnn_cli {

// What a host process adds to every registry the command opens.
struct RegistryExtension {
  std::vector<std::string> folders;          // searched after --plugin-path's, before the defaults
  std::function<void(dtnn::Registry&)> add;  // adds the host's in-process plugins
};
void set_registry_extension(RegistryExtension extension);
const RegistryExtension& registry_extension();

// The command: argv[0] is the program's name, argv[1] the subcommand. Returns the exit status
// (0, 1 for an error in the experiment, 2 for a bad command line).
int run(int argc, char** argv);

// Replaces this process by `python3 -m dtnn ARGS...` (DTNN_PYTHON, or the interpreter found at
// build time; the build tree's package first on PYTHONPATH; DTNN_IN_PYTHON=1 set, so that it
// runs the command in its own process instead of coming back here). Throws dtnn::Error only when
// the interpreter cannot be started.
[[noreturn]] void exec_python_dtnn(const std::vector<std::string>& args);

}  // namespace dtnn_cli
