// The dtnn program: the command (cli.hpp). Where a plugin folder holds plugins written in Python
// (.py files: DTNN_PLUGIN_PATH's folders, --plugin-path's, the build's or the install's), the
// program hands itself over to the dtnn Python package (`python3 -m dtnn` with the same
// arguments), which registers them and runs the same command in its process: an experiment names
// them like any plugin (docs/plugin-authoring.md).
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <vector>

#include "cli.hpp"
#include "dtnn/registry.hpp"

namespace {

// The folders --plugin-path names (both spellings, "--plugin-path X" and "--plugin-path=X").
std::vector<std::string> plugin_path_arguments(int argc, char** argv) {
  std::vector<std::string> out;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    for (const std::string flag : {"--plugin-path", "--plugin_path"}) {
      if (a == flag && i + 1 < argc) out.emplace_back(argv[i + 1]);
      if (a.starts_with(flag + "=")) out.push_back(a.substr(flag.size() + 1));
    }
  }
  return out;
}

bool folders_hold_python_plugins(const std::vector<std::filesystem::path>& folders) {
  for (const auto& folder : folders) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(folder, ec))
      if (entry.path().extension() == ".py" && entry.is_regular_file(ec)) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (!std::getenv("DTNN_IN_PYTHON") && folders_hold_python_plugins(dtnn::Registry::default_folders(
                                            plugin_path_arguments(argc, argv)))) {
    try {
      dtnn_cli::exec_python_dtnn(std::vector<std::string>(argv + 1, argv + argc));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dtnn: error: %s\n", e.what());
      return 1;
    }
  }
  return dtnn_cli::run(argc, argv);
}
