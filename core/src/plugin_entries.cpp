#include "dtnn/plugin_entries.hpp"

#include <nlohmann/json.hpp>

#include "dtnn/error.hpp"

namespace dtnn {

std::vector<PluginEntry> plugin_entries(const nlohmann::json& list, const std::string& key,
                                        const std::string& expected) {
  std::vector<PluginEntry> entries;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& entry = list[i];
    const std::string where = key + "[" + std::to_string(i) + "]";
    if (entry.is_string()) {
      entries.push_back({entry.get<std::string>(), Params(nlohmann::json::object(), where)});
    } else if (entry.is_object() && entry.contains("name") && entry["name"].is_string()) {
      nlohmann::json params = entry;
      params.erase("name");
      entries.push_back({entry["name"].get<std::string>(), Params(params, where)});
    } else {
      throw Error(where + ": expected " + expected + ", got " + entry.dump());
    }
  }
  return entries;
}

}  // namespace dtnn
