// A list of plugins as a configuration names them, each a name or {"name": ..., parameters}
// (best_of's candidates, output.energy's sources). The parameters are checked later, by the
// registry that creates each plugin.
#pragma once
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/params.hpp"

namespace dtnn {

struct PluginEntry {
  std::string name;
  Params params;  // its parameters, located at key[i] for messages
};

// list's entries (list must be an array); an entry of another form is an Error naming key[i],
// `expected` and what was there.
DTNN_CORE_EXPORT std::vector<PluginEntry> plugin_entries(const nlohmann::json& list,
                                                         const std::string& key,
                                                         const std::string& expected);

}  // namespace dtnn
