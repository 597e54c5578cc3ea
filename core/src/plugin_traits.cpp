#include "dtnn/plugin_traits.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "dtnn/error.hpp"

namespace dtnn {

using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& key, const std::string& expected, const json& got) {
  throw Error("traits." + key + ": expected " + expected + ", got " + got.dump().substr(0, 200));
}

bool read_bool(const json& traits, const char* key) {
  const auto it = traits.find(key);
  if (it == traits.end()) return false;
  if (!it->is_boolean()) bad(key, "true or false", *it);
  return it->get<bool>();
}

std::vector<std::string> read_names(const json& j, const std::string& key, bool non_empty) {
  if (!j.is_array() || (non_empty && j.empty()) ||
      !std::all_of(j.begin(), j.end(), [](const json& v) { return v.is_string(); }))
    bad(key, non_empty ? "a non-empty list of names" : "a list of names", j);
  return j.get<std::vector<std::string>>();
}

std::vector<FusionRule> read_fuses(const json& fuses) {
  if (!fuses.is_array()) bad("fuses", "a list of fusions", fuses);
  std::vector<FusionRule> rules;
  for (std::size_t i = 0; i < fuses.size(); ++i) {
    const json& f = fuses[i];
    const std::string key = "fuses[" + std::to_string(i) + "]";
    if (!f.is_object() || !f.contains("option") || !f["option"].is_string())
      bad(key, "{\"option\": name, \"absorbs\": [types], \"into\": [parameters]}", f);
    FusionRule rule{f["option"].get<std::string>(),
                    read_names(f.value("absorbs", json()), key + ".absorbs", true),
                    read_names(f.value("into", json()), key + ".into", true)};
    if (rule.absorbs.size() != rule.into.size()) bad(key, "absorbs and into of one length", f);
    rules.push_back(std::move(rule));
  }
  return rules;
}

}  // namespace

PluginTraits read_plugin_traits(const json& traits, const json& parameters) {
  if (!traits.is_object()) throw Error("traits: expected a JSON object, got " + traits.dump());
  PluginTraits t;
  if (const auto it = traits.find("aliases"); it != traits.end())
    t.aliases = read_names(*it, "aliases", false);
  if (const auto it = traits.find("alias_defaults"); it != traits.end()) {
    if (!it->is_object()) bad("alias_defaults", "an object of alias: {parameters}", *it);
    for (const auto& [alias, values] : it->items()) {
      const std::string key = "alias_defaults." + alias;
      if (std::find(t.aliases.begin(), t.aliases.end(), alias) == t.aliases.end())
        bad(key, "one of its aliases", json(alias));
      if (!values.is_object()) bad(key, "an object of parameters", values);
      for (const auto& [name, value] : values.items())
        if (!parameters.contains(name)) bad(key + "." + name, "one of its parameters", json(name));
      t.alias_defaults.emplace(alias, Params(values, "traits." + key));
    }
  }
  t.is_default = read_bool(traits, "default");

  if (const auto it = traits.find("fuses"); it != traits.end()) t.fuses = read_fuses(*it);
  if (const auto it = traits.find("alias"); it != traits.end()) {
    const json fixed = it->is_object() ? it->value("fixed", json::object()) : json();
    if (!it->is_object() || !it->contains("type") || !(*it)["type"].is_string() ||
        !fixed.is_object())
      bad("alias", "{\"type\": name, \"fixed\": {parameters}}", *it);
    t.alias = LayerAlias{(*it)["type"].get<std::string>(), Params(fixed, "traits.alias.fixed")};
  }
  t.softmax = read_bool(traits, "softmax");
  t.reshape = read_bool(traits, "reshape");

  t.groups = read_bool(traits, "groups");
  if (const auto it = traits.find("precisions"); it != traits.end())
    for (const std::string& name : read_names(*it, "precisions", false)) {
      const std::optional<Precision> p = parse_precision(name);
      if (!p) bad("precisions", "names of precisions (bf16, fp16)", *it);
      t.precisions.push_back(*p);
    }

  if (const auto it = traits.find("better"); it != traits.end()) {
    if (*it != "min" && *it != "max") bad("better", "\"min\" or \"max\"", *it);
    t.maximise = *it == "max";
  }

  if (const auto it = traits.find("launched_when"); it != traits.end())
    t.launched_when = read_names(*it, "launched_when", false);

  if (const auto it = traits.find("covers"); it != traits.end()) {
    if (!it->is_string()) bad("covers", "the name of a device kind", *it);
    t.covers = it->get<std::string>();
  }
  if (const auto it = traits.find("auto_rank"); it != traits.end()) {
    if (!it->is_number_integer()) bad("auto_rank", "an integer", *it);
    t.auto_rank = it->get<std::int64_t>();
  }
  return t;
}

}  // namespace dtnn
