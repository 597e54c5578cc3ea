// What the dtnn command's subcommands share: a usage error (exit 2), the plugin folders, and the
// subcommands defined outside cli.cpp.
#pragma once
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "dtnn/checkpoint.hpp"
#include "dtnn/log.hpp"
#include "dtnn/model.hpp"
#include "dtnn/pydtnn_weights.hpp"
#include "dtnn/registry.hpp"

namespace dtnn_cli {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Common {
  std::vector<std::string> plugin_path;
  // The plugins of --plugin-path's folders and the default ones, with the host process's
  // (cli.hpp: registry_extension); the folders' warnings logged.
  dtnn::Registry registry() const;
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

// With --help given: prints "usage: " + usage and the options, and returns true.
inline bool print_help(const boost::program_options::variables_map& vm,
                       const boost::program_options::options_description& desc,
                       const std::string& usage) {
  if (!vm.count("help")) return false;
  std::printf("usage: %s\n", usage.c_str());
  std::ostringstream s;
  s << desc;
  std::fputs(s.str().c_str(), stdout);
  return true;
}

// Trained weights as --weights names them: a checkpoint folder stands for its newest checkpoint.
inline std::string weights_file(const std::string& given) {
  std::error_code ec;
  return std::filesystem::is_directory(given, ec) ? dtnn::latest_checkpoint(given).string() : given;
}

// Loads weights_file()'s file into model: PyDTNN's .npz, else a dtnn checkpoint (as
// training.weights_and_bias_filename reads them).
inline void load_weights(dtnn::Model& model, const std::string& file) {
  if (std::filesystem::path(file).extension() == ".npz")
    dtnn::load_pydtnn_weights(model, file);
  else
    dtnn::load_checkpoint(file, model);
}

// dtnn predict (predict.cpp), dtnn plot (plot.cpp), dtnn generate (generate.cpp) and dtnn
// quantize (quantize.cpp).
int cmd_predict(const std::vector<std::string>& args);
int cmd_generate(const std::vector<std::string>& args);
int cmd_quantize(const std::vector<std::string>& args);
int cmd_plot(const std::vector<std::string>& args);

}  // namespace dtnn_cli
