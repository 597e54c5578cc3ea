// Dispatches a plugin to its kind's conformance driver over its cases (plugin_conformance.hpp).
#include "dtnn/testing/plugin_conformance.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "dtnn/error.hpp"
#include "dtnn/testing/dataset_fixtures.hpp"

namespace dtnn::testing {

using nlohmann::json;

namespace {

// Each kind's case when a plugin declares none: what its defaults can be checked at.
json default_cases(const std::string& kind) {
  if (kind == "layer") return json::parse(R"([{"params": {}, "input": [4, 5, 3], "batch": 3}])");
  if (kind == "metric" || kind == "loss") return json::parse(R"([{"params": {}, "classes": 4}])");
  if (kind == "optimizer" || kind == "conv" || kind == "dataset" || kind == "codec" ||
      kind == "scheduler")
    return json::parse(R"([{"params": {}}])");
  return json::array();
}

// The folder the fixtures of this process are written under, removed when it ends.
const std::filesystem::path& fixture_root() {
  struct Root {
    std::filesystem::path path =
        std::filesystem::temp_directory_path() / ("dtnn-fixtures-" + std::to_string(::getpid()));
    ~Root() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static const Root root;
  return root.path;
}

}  // namespace

std::string conformance_cases(const PluginRecord& record) {
  const json traits = json::parse(record.traits_json);
  const auto declared = traits.find("conformance");
  json cases = declared == traits.end() ? default_cases(record.kind) : *declared;
  if (!cases.is_array() ||
      !std::all_of(cases.begin(), cases.end(), [](const json& c) { return c.is_object(); }))
    throw Error(record.file.string() + ": traits.conformance: expected a list of case objects");
  // A dataset that reads files: the files its traits describe, written here (dataset_fixtures.hpp).
  const json fixtures = traits.value("fixtures", json::array());
  if (!fixtures.is_array())
    throw Error(record.file.string() + ": traits.fixtures: expected a list of fixtures");
  for (std::size_t i = 0; i < fixtures.size(); ++i) try {
      for (const json& c : write_fixture(
               fixtures[i],
               fixture_root() / (record.kind + "_" + record.name + "_" + std::to_string(i))))
        cases.push_back(c);
    } catch (const Error& e) {
      throw Error(record.file.string() + ": traits.fixtures[" + std::to_string(i) +
                  "]: " + e.what());
    }
  return cases.dump();
}

std::vector<Check> check_plugin(const Registry& registry, const PluginRecord& record) {
  return check_plugin(registry, record, conformance_cases(record));
}

std::vector<Check> check_plugin(const Registry& registry, const PluginRecord& record,
                                const std::string& cases_json) {
  using Driver = std::vector<Check> (*)(const Registry&, const PluginRecord&, const std::string&);
  Driver driver = record.kind == "layer"       ? check_layer
                  : record.kind == "optimizer" ? check_optimizer
                  : record.kind == "metric"    ? check_metric
                  : record.kind == "loss"      ? check_loss
                  : record.kind == "conv"      ? check_conv
                  : record.kind == "dataset"   ? check_dataset
                  : record.kind == "codec"     ? check_codec
                  : record.kind == "scheduler" ? check_scheduler
                                               : nullptr;
  std::vector<Check> out;
  if (!driver) return out;
  if (record.device != Device::cpu) {  // twins: dtnn/testing/device_twin.hpp, on their device
    out.push_back({"conformance", "", false, true,
                   "a twin on " + std::string(to_string(record.device)) +
                       " is checked against its cpu plugin"});
    return out;
  }
  const json cases = json::parse(cases_json);
  if (cases.empty())
    out.push_back({"conformance", "", false, true,
                   "it declares no case it can be checked at on its own (it reads files)"});
  for (const json& c : cases) {
    try {
      for (Check& check : driver(registry, record, c.dump())) out.push_back(std::move(check));
    } catch (const std::exception& e) {
      out.push_back({"builds and runs", c.dump(), true, false, e.what()});
    }
  }
  return out;
}

}  // namespace dtnn::testing
