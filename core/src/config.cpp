#include "dtnn/config.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>
#include <vector>

#include "dtnn/config_schema.hpp"
#include "dtnn/error.hpp"
#include "dtnn/executable_dir.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/log.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ExperimentConfig::where() const { return file.empty() ? "config" : file.string(); }

namespace {

// A parser callback that refuses nesting deeper than kMaxJsonDepth while parsing, before any of
// nlohmann's recursive copies, comparisons or dumps meets the document, and warns of a key given
// twice in one object (JSON takes the last silently: a config that sets "epochs" twice runs with
// the second, whichever the user meant).
json::parser_callback_t parse_guard(const std::string& where) {
  auto open_objects = std::make_shared<std::vector<std::set<std::string>>>();
  return [where, open_objects](int depth, json::parse_event_t event, json& parsed) {
    if (depth > kMaxJsonDepth)
      throw Error(where + ": arrays and objects nested more than " + std::to_string(kMaxJsonDepth) +
                  " deep (a model's blocks nest far less)");
    if (event == json::parse_event_t::object_start) {
      open_objects->emplace_back();
    } else if (event == json::parse_event_t::object_end && !open_objects->empty()) {
      open_objects->pop_back();
    } else if (event == json::parse_event_t::key && !open_objects->empty() && parsed.is_string()) {
      if (!open_objects->back().insert(parsed.get<std::string>()).second)
        log_warning(where + ": the key \"" + parsed.get<std::string>() +
                    "\" is given twice in one object: the last value is taken");
    }
    return true;
  };
}

// The keys that choose a plugin by its name or by {"name": ..., parameters...}.
bool is_plugin_choice(const std::string& path) {
  return path == "loss" || path == "parallel.communicator" || path == "parallel.codec";
}

}  // namespace

json parse_json(const std::string& text, const std::string& where) {
  try {
    return json::parse(text, parse_guard(where), true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    std::string msg = e.what();
    if (auto p = msg.find("] "); p != std::string::npos) msg = msg.substr(p + 2);
    // parse_error knows the byte; out_of_range (a number such as 1e400) does not.
    const auto* parse = dynamic_cast<const json::parse_error*>(&e);
    if (!parse) throw Error(where + ": invalid JSON: " + msg);
    const std::size_t offset =
        std::min<std::size_t>(parse->byte ? parse->byte - 1 : 0, text.size());
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n');
    const std::size_t last_nl = text.rfind('\n', offset ? offset - 1 : 0);
    const std::size_t column =
        last_nl == std::string::npos || offset == 0 ? offset + 1 : offset - last_nl;
    throw Error(where + ":" + std::to_string(line) + ":" + std::to_string(column) +
                ": invalid JSON (byte " + std::to_string(offset) + "): " + msg);
  }
}

json read_json_file(const fs::path& file) { return parse_json(read_file(file), file.string()); }

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

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = std::string::npos;
  for (const auto& c : candidates) {
    std::vector<std::size_t> row(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      std::size_t diag = row[0];
      row[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j) {
        std::size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (word[i - 1] == c[j - 1] ? 0u : 1u)});
        diag = up;
      }
    }
    if (row[c.size()] < best_distance) {
      best_distance = row[c.size()];
      best = c;
    }
  }
  std::size_t limit = std::max<std::size_t>(2, word.size() / 3);
  return best_distance <= limit ? best : "";
}

void apply_override(json& config, const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("--set expects key=value (e.g. training.epochs=2), got '" + assignment + "'");
  std::string key = assignment.substr(0, eq), raw = assignment.substr(eq + 1);
  json value = json::parse(raw, parse_guard("--set " + key), false);
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

}  // namespace

namespace {

// The value at a dotted path of a merged config (every key of the schema is there).
const json& at(const json& config, std::string_view path) {
  const json* node = &config;
  for (auto dot = path.find('.'); dot != std::string_view::npos; dot = path.find('.')) {
    node = &(*node)[std::string(path.substr(0, dot))];
    path.remove_prefix(dot + 1);
  }
  return (*node)[std::string(path)];
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
    const json& value = at(config, k.path);
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

namespace {
// PyDTNN's names of zoo models that configs/models holds under another name.
constexpr std::pair<std::string_view, std::string_view> kModelAliases[] = {
    {"resnet50v15_imagenet", "resnet50_imagenet"},  // dtnn's ResNet-50 is v1.5
    {"mobilenetv2_pytorch", "mobilenetv2"},         // PyDTNN 3.x's name of MobileNetV2
};
}  // namespace

std::string_view model_alias(std::string_view name) {
  for (const auto& [alias, model] : kModelAliases)
    if (alias == name) return model;
  return name;
}

// A bare name ("simplemlp": no folder, no .json) is the zoo's model: configs/models beside the
// experiment, then the source tree's, the program's and the core library's (share/dtnn beside
// their folders), and the configured install's. A file of that name in the experiment's
// or the working folder is taken only when the zoo has no such model; when both exist the zoo's
// wins and a note says how to take the file ("./simplemlp"). Anything else is a path, relative to
// the experiment's folder, then the working folder.
fs::path resolve_model_path(const std::string& name, const fs::path& config_file,
                            std::string_view key) {
  const std::string model(model_alias(name));
  const fs::path given(model);
  const fs::path config_dir = config_file.empty() ? fs::path(".") : config_file.parent_path();
  std::vector<fs::path> zoo, files;
  if (given.is_absolute()) {
    files.push_back(given);
  } else {
    files.push_back(config_dir / given);
    files.push_back(fs::current_path() / given);
    if (given.extension() != ".json" && !given.has_parent_path()) {
      const std::string file = model + ".json";
      zoo.push_back(config_dir / "models" / file);
      zoo.push_back(fs::path(DTNN_SOURCE_DIR) / "configs" / "models" / file);
      if (const fs::path exe = executable_dir(); !exe.empty())  // a moved install or bundle
        zoo.push_back(exe.parent_path() / "share" / "dtnn" / "configs" / "models" / file);
      if (const fs::path lib = core_library_dir(); !lib.empty())  // the Python module's install
        zoo.push_back(lib.parent_path() / "share" / "dtnn" / "configs" / "models" / file);
      zoo.push_back(fs::path(DTNN_INSTALL_PREFIX) / "share" / "dtnn" / "configs" / "models" / file);
    }
  }
  auto first_file = [](const std::vector<fs::path>& candidates) -> std::optional<fs::path> {
    for (const auto& c : candidates) {
      std::error_code ec;
      if (fs::is_regular_file(c, ec)) return c.lexically_normal();
    }
    return std::nullopt;
  };
  const std::optional<fs::path> from_zoo = first_file(zoo), from_files = first_file(files);
  if (from_zoo) {
    if (from_files)
      log_warning(std::string(key) + ": '" + name + "' is the zoo's model " + from_zoo->string() +
                  ", not the file " + from_files->string() + " (write ./" + name +
                  " to take the file)");
    return *from_zoo;
  }
  if (from_files) return *from_files;
  std::string looked;
  for (const auto* list : {&zoo, &files})
    for (const auto& c : *list)
      looked += (looked.empty() ? "" : ", ") + c.lexically_normal().string();
  throw Error((config_file.empty() ? std::string("config") : config_file.string()) + ": " +
              std::string(key) + ": cannot find '" + name + "' (looked for " + looked + ")");
}

}  // namespace dtnn
