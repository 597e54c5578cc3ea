// dtnn plot FILE.json [--output FILE.png]: runs scripts/dtnn_plot.py (installed beside the
// configs, share/dtnn/) with Debian's Python, where python3-matplotlib is installed.
#include <unistd.h>

#include <filesystem>

#include "command_support.hpp"

namespace dtnn_cli {

namespace {

namespace fs = std::filesystem;

fs::path plot_script() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path candidates[] = {exe.parent_path() / "../share/dtnn/dtnn_plot.py",
                                 fs::path(DTNN_SOURCE_DIR) / "scripts/dtnn_plot.py"};
  for (const fs::path& p : candidates)
    if (fs::exists(p, ec)) return p;
  throw UsageError("dtnn plot: dtnn_plot.py is not installed beside dtnn (share/dtnn)");
}

}  // namespace

int cmd_plot(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h")
    throw UsageError(
        "usage: dtnn plot HISTORY.json|PREDICT.json [--output FILE.png] (loss and metrics per "
        "epoch, or predicted scaling)");
  const std::string python = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
  const std::string script = plot_script().string();
  std::vector<std::string> argv_strings = {python, script};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& s : argv_strings) argv.push_back(s.data());
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  throw UsageError("dtnn plot: cannot run " + python + ": install Debian's python3");
}

}  // namespace dtnn_cli
