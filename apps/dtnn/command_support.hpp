// What the dtnn command's subcommands share: a usage error (exit 2), the plugin folders, and the
// subcommands defined outside main.cpp.
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "dtnn/log.hpp"
#include "dtnn/registry.hpp"

namespace dtnn_cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Common {
  std::vector<std::string> plugin_path;
  dtnn::Registry registry() const {
    dtnn::Registry r(dtnn::Registry::default_folders(plugin_path));
    for (const auto& w : r.warnings()) dtnn::log_warning(w);
    return r;
  }
};

// dtnn predict (predict.cpp) and dtnn plot (plot.cpp).
int cmd_predict(const std::vector<std::string>& args);
int cmd_plot(const std::vector<std::string>& args);

}  // namespace dtnn_cli
