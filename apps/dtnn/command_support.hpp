// What the dtnn command's subcommands share: a usage error (exit 2), the plugin folders, and the
// subcommands defined outside main.cpp.
#pragma once
#include <boost/program_options.hpp>
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

// A subcommand's options, the experiment file as the first positional argument ("config").
inline boost::program_options::variables_map parse_with_config(
    const std::vector<std::string>& args, const boost::program_options::options_description& desc) {
  namespace po = boost::program_options;
  po::positional_options_description pos;
  pos.add("config", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(pos).run(), vm);
  po::notify(vm);
  return vm;
}

// dtnn predict (predict.cpp), dtnn plot (plot.cpp), dtnn generate (generate.cpp) and dtnn
// quantize (quantize.cpp).
int cmd_predict(const std::vector<std::string>& args);
int cmd_generate(const std::vector<std::string>& args);
int cmd_quantize(const std::vector<std::string>& args);
int cmd_plot(const std::vector<std::string>& args);

}  // namespace dtnn_cli
