// PluginTraits: what a plugin's descriptor says of it besides its parameters (the JSON object
// PluginDescriptor::traits), read and checked once, when the registry loads the plugin: a
// malformed trait refuses the plugin, naming the key and what was expected. Code that asks a
// plugin's traits reads these fields; the test harness's own keys (conformance, fixtures,
// twin_checks) stay in the record's JSON text, for dtnn_testing to read.
#pragma once
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/params.hpp"
#include "dtnn/precision.hpp"

namespace dtnn {

// A run of layers a layer plugin takes into itself:
//   {"fuses": [{"option": "conv_batchnorm_relu", "absorbs": ["batchnorm", "relu"],
//               "into": ["batchnorm", "activation"]}, ...]}
// absorbs[k], the k-th layer after it, becomes its parameter into[k] (see fuse_layers, model.hpp).
struct FusionRule {
  std::string option;
  std::vector<std::string> absorbs, into;
};

// A layer plugin that is another with some parameters fixed (pointwise_conv2d: a conv2d with
// kernel 1): {"alias": {"type": "conv2d", "fixed": {"kernel": 1}}}.
struct LayerAlias {
  std::string type;
  Params fixed;  // the parameters it fixes
};

struct PluginTraits {
  // Any kind.
  std::vector<std::string> aliases;  // other names configs may give it ("aliases")
  // An alias that stands for the plugin with other defaults ("alias_defaults": {alias: {...}}):
  // alias -> those parameters.
  std::map<std::string, Params> alias_defaults;
  bool is_default = false;  // "default": what an experiment uses where it names none of its kind

  // Layers.
  std::vector<FusionRule> fuses;    // "fuses"
  std::optional<LayerAlias> alias;  // "alias"
  bool softmax = false;             // "softmax": a softmax over each sample (Model, Loss)
  bool reshape = false;             // "reshape": its output is its input's memory (LayerChain)

  // Conv algorithms.
  bool groups = false;                // "groups": it computes grouped geometries
  std::vector<Precision> precisions;  // "precisions": the low precisions it has paths for

  // Metrics: whether a higher value is better ("better": "max", accuracy) or a lower one
  // ("better": "min", an error; also what an undeclared one is taken for). A scheduler watching a
  // metric in mode "auto" goes by it (MonitoredValue, scheduler.hpp).
  bool maximise = false;

  // Communicators: environment variables that say a launcher started this process among others
  // ("launched_when": ["OMPI_COMM_WORLD_SIZE", ...]).
  std::vector<std::string> launched_when;

  // Energy sources: the device kind it measures ("covers", default its name) and its place among
  // those of that kind when the run asks for "auto" ("auto_rank", lower first).
  std::optional<std::string> covers;
  std::int64_t auto_rank = 100;
};

// The traits of a plugin whose parameters (defaults) are `parameters`; an Error naming the key
// ("traits.fuses[1].into: ...") when one is malformed.
DTNN_CORE_EXPORT PluginTraits read_plugin_traits(const nlohmann::json& traits,
                                                 const nlohmann::json& parameters);

}  // namespace dtnn
