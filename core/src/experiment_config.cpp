// The experiment's configuration: the defaults from the schema, --set overrides, and the checks
// of a whole experiment (each key's rule, keys that must agree with each other).
#include <algorithm>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "dtnn/config.hpp"
#include "dtnn/config_schema.hpp"
#include "dtnn/error.hpp"

namespace dtnn {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ExperimentConfig::where() const { return file.empty() ? "config" : file.string(); }

namespace {

// The keys that choose a plugin by its name or by {"name": ..., parameters...}.
bool is_plugin_choice(const std::string& path) {
  return path == "loss" || path == "parallel.communicator" || path == "parallel.codec";
}

}  // namespace

json experiment_defaults() {
  json out = json::object();
  for (const config::Key& k : config::keys()) {
    json* node = &out;
    std::string_view path = k.path;
    for (auto dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
      node = &(*node)[std::string(path.substr(0, dot))];
      path.remove_prefix(dot + 1);
    }
    (*node)[std::string(path)] = config::default_of(k);
  }
  return out;
}

void apply_override(json& config, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--set expects key=value (e.g. training.epochs=2), got '" + assignment + "'");
  std::string key = assignment.substr(0, eq), raw = assignment.substr(eq + 1);
  json value = parse_json_or_discarded(raw, "--set " + key);
  if (value.is_discarded()) {  // mnist, NHWC, a path: plain strings, which JSON holds as UTF-8
    value = raw;
    try {
      (void)value.dump();
    } catch (const json::type_error&) {
      throw Error("--set " + key + ": the value is not valid UTF-8 text");
    }
  }
  json* node = &config;
  std::stringstream ss(key);
  std::string part;
  std::vector<std::string> parts;
  while (std::getline(ss, part, '.')) parts.push_back(part);
  std::string path;  // parts[0..i], dotted
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].empty()) throw Error("--set " + assignment + ": empty key component");
    path += (i == 0 ? "" : ".") + parts[i];
    if (!node->is_object())
      throw Error("--set " + assignment + ": '" + parts[i - 1] + "' is not an object");
    if (i + 1 == parts.size()) {
      (*node)[parts[i]] = value;
    } else {
      node = &(*node)[parts[i]];
      if (node->is_null()) *node = json::object();
      // A plugin named by a name or {"name", parameters}: a parameter set on a name makes the
      // object.
      if (is_plugin_choice(path) && node->is_string()) *node = {{"name", *node}};
    }
  }
}

namespace {

// Plugin parameters, and the fusion options the layer plugins declare: checked later, against the
// plugins.
const std::set<std::string> kOpenObjects = {"dataset", "optimizer", "conv", "fusion"};

[[noreturn]] void type_error(const std::string& where, const std::string& path,
                             const std::string& expected, const json& got) {
  throw Error(where + ": " + path + ": expected " + expected + ", got " + got.dump());
}

void check_value(const json& def, const json& got, const std::string& where,
                 const std::string& path) {
  if (path == "model") {
    if (!got.is_string() && !got.is_object())
      type_error(where, path, "a model file path, a model name or a model object", got);
    return;
  }
  if (path == "output.energy") {  // "auto", "none" or a list (EnergyMeter checks the entries)
    if (!got.is_string() && !got.is_array())
      type_error(where, path, "\"auto\", \"none\" or a list of energy sources", got);
    return;
  }
  if (is_plugin_choice(path)) {
    if (!got.is_string() && !(got.is_object() && got.contains("name") && got["name"].is_string()))
      type_error(where, path,
                 "a " + std::string(path == "loss" ? "loss" : "plugin") +
                     " name, or {\"name\": ..., parameters...}",
                 got);
    return;
  }
  if (def.is_number_integer()) {
    if (!got.is_number_integer()) type_error(where, path, "an integer", got);
  } else if (def.is_number()) {
    if (!got.is_number()) type_error(where, path, "a number", got);
  } else if (def.is_boolean()) {
    if (!got.is_boolean()) type_error(where, path, "true or false", got);
  } else if (def.is_string()) {
    if (!got.is_string()) type_error(where, path, "a string", got);
  } else if (def.is_array()) {
    if (!got.is_array()) type_error(where, path, "a list", got);
  } else if (def.is_object()) {
    if (!got.is_object()) type_error(where, path, "an object", got);
  }
}

void merge_checked(json& cfg, const json& defaults, const std::string& where,
                   const std::string& prefix, bool open) {
  std::vector<std::string> valid;
  for (auto it = defaults.begin(); it != defaults.end(); ++it) valid.push_back(it.key());
  for (auto it = cfg.begin(); it != cfg.end(); ++it) {
    std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    auto def = defaults.find(it.key());
    if (def == defaults.end()) {
      if (open) continue;  // a plugin parameter: the registry checks it against the plugin
      std::string hint = closest_match(it.key(), valid);
      throw Error(where + ": unknown key '" + path + "'" +
                  (hint.empty()
                       ? ""
                       : " (did you mean '" + (prefix.empty() ? "" : prefix + ".") + hint + "'?)"));
    }
    check_value(*def, it.value(), where, path);
    if (def->is_object() && it.value().is_object() && path != "model" && !is_plugin_choice(path))
      merge_checked(it.value(), *def, where, path, kOpenObjects.count(path) > 0);
  }
  for (auto it = defaults.begin(); it != defaults.end(); ++it)
    if (!cfg.contains(it.key())) cfg[it.key()] = it.value();
}

void require(bool ok, const std::string& where, const std::string& path,
             const std::string& expected, const json& got) {
  if (!ok) type_error(where, path, expected, got);
}

// What no single key's rule says: keys that go together, lists of plugins, the model.
void check_across_keys(const json& config, const std::string& where) {
  const json& d = config["dataset"];
  const json &mean = d["normalize_mean"], &stdv = d["normalize_std"];
  const bool numbers =
      std::all_of(mean.begin(), mean.end(), [](const json& v) { return v.is_number(); }) &&
      std::all_of(stdv.begin(), stdv.end(),
                  [](const json& v) { return v.is_number() && v.get<double>() > 0; });
  require(numbers && mean.size() == stdv.size(), where, "dataset.normalize_std",
          "as many positive numbers as dataset.normalize_mean has numbers (per-channel mean and "
          "standard deviation)",
          stdv);
  require(config["metrics"].is_null() || config["metrics"].is_array(), where, "metrics",
          "a list of metrics", config["metrics"]);
  for (std::size_t i = 0; i < config["metrics"].size(); ++i) {
    const json& m = config["metrics"][i];
    require(m.is_string() || (m.is_object() && m.contains("name") && m["name"].is_string()), where,
            "metrics[" + std::to_string(i) + "]",
            "a metric name, or {\"name\": ..., parameters...}", m);
  }
  for (std::size_t i = 0; i < config["schedulers"].size(); ++i) {
    const json& s = config["schedulers"][i];
    require(s.is_object() && s.contains("name") && s["name"].is_string(), where,
            "schedulers[" + std::to_string(i) + "]", "an object with a \"name\"", s);
  }
  if (config["optimizer"].contains("learning_rate_scaling"))
    require(config["optimizer"]["learning_rate_scaling"].is_boolean() ||
                config["optimizer"]["learning_rate_scaling"] == "auto",
            where, "optimizer.learning_rate_scaling", "true, false or \"auto\"",
            config["optimizer"]["learning_rate_scaling"]);
  if (config["parallel"]["pipeline"] == true && config["parallel"]["model_sync_freq"] != 0)
    throw Error(where +
                ": parallel.pipeline: pipelines the gradient exchange (model_sync_freq 0); with "
                "model averaging every " +
                config["parallel"]["model_sync_freq"].dump() + " steps it has nothing to overlap");
  const json& m = config["model"];
  require(m.is_object() || !m.get<std::string>().empty(), where, "model",
          "a model file, a model name (e.g. \"simplecnn\") or a model object", m);
}

}  // namespace

void validate_experiment(json& config, const std::string& where) {
  if (!config.is_object()) throw Error(where + ": expected a JSON object at the top level");
  merge_checked(config, experiment_defaults(), where, "", false);
  for (const config::Key& k : config::keys()) {
    const json& value = config::value_at(config, k.path);
    if (!k.rule.allows(value)) type_error(where, k.path, k.rule.expected, value);
  }
  check_across_keys(config, where);
}

ExperimentConfig make_experiment(json config, const std::vector<std::string>& overrides,
                                 const std::string& where) {
  validate_experiment(config, where);
  if (!overrides.empty()) {
    for (const auto& o : overrides) apply_override(config, o);
    validate_experiment(config, "command line");
  }
  return {std::move(config), {}};
}

ExperimentConfig load_experiment(const fs::path& file, const std::vector<std::string>& overrides) {
  ExperimentConfig cfg = make_experiment(read_json_file(file), overrides, file.string());
  cfg.file = file;
  return cfg;
}

}  // namespace dtnn
