#include "dtnn/model_spec.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "dtnn/config.hpp"
#include "dtnn/device.hpp"
#include "dtnn/error.hpp"
#include "dtnn/registry.hpp"

namespace dtnn {

using nlohmann::json;

namespace {

// Layers a list expands to, blocks' paths, containers' lists and repeats included, saturating at
// kMaxModelLayers + 1. The recursion follows the document's nesting, which parsing bounded
// (kMaxJsonDepth).
std::int64_t expanded_layers(const json& layers) {
  constexpr std::int64_t kOver = kMaxModelLayers + 1;
  if (!layers.is_array()) return 0;  // parse_layers names the error
  std::int64_t n = 0;
  for (const json& e : layers) {
    std::int64_t one = 1;
    if (!e.is_object()) {
    } else if (e.contains("repeat") && e["repeat"].is_number_integer() && e.contains("layers")) {
      const std::int64_t r = std::clamp<std::int64_t>(e["repeat"].get<std::int64_t>(), 0, kOver);
      one = r * expanded_layers(e["layers"]);  // both at most kOver: no overflow
    } else {
      // Blocks' paths, and the layer lists of other containers (encoder_decoder's stacks).
      for (auto it = e.begin(); it != e.end(); ++it) {
        if (!it->is_array() || it->empty()) continue;
        if (it.key() == "paths")
          for (const json& path : *it) one = std::min(kOver, one + expanded_layers(path));
        else if (it->front().is_object())
          one = std::min(kOver, one + expanded_layers(*it));
      }
    }
    n = std::min(kOver, n + std::min(kOver, one));
  }
  return n;
}

void parse_layers(const json& layers, const std::string& where, std::vector<LayerSpec>& out) {
  if (!layers.is_array()) throw Error(where + ": expected a list of layers, got " + layers.dump());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const json& e = layers[i];
    std::string at = where + "[" + std::to_string(i) + "]";
    if (!e.is_object()) throw Error(at + ": expected a layer object, got " + e.dump());
    if (e.contains("repeat")) {
      for (auto it = e.begin(); it != e.end(); ++it)
        if (it.key() != "repeat" && it.key() != "layers")
          throw Error(at + ": unknown key '" + it.key() +
                      "' in a repeat block (expected repeat, layers)");
      if (!e["repeat"].is_number_integer() || e["repeat"].get<std::int64_t>() < 1)
        throw Error(at + ".repeat: expected a positive integer, got " + e["repeat"].dump());
      if (!e.contains("layers")) throw Error(at + ": a repeat block needs 'layers'");
      for (std::int64_t r = 0; r < e["repeat"].get<std::int64_t>(); ++r)
        parse_layers(e["layers"], at + ".layers", out);
      continue;
    }
    if (!e.contains("type") || !e["type"].is_string())
      throw Error(at + ": expected a \"type\" string naming the layer (e.g. \"conv2d\")");
    json params = e;
    params.erase("type");
    std::string type = e["type"].get<std::string>();
    out.push_back({type, Params(params, at)});
  }
}

}  // namespace

std::vector<FusionRule> fusion_rules(const Registry& registry, const std::string& type,
                                     Device device) {
  const PluginRecord* r = registry.find("layer", type, device);
  if (!r || r->status != PluginRecord::Status::ok) return {};
  return r->traits.fuses;
}

void resolve_aliases(std::vector<LayerSpec>& specs, const Registry& registry) {
  for (LayerSpec& spec : specs) {
    const PluginRecord* r = registry.find("layer", spec.type);
    if (!r || r->status != PluginRecord::Status::ok) continue;  // creating it names the problem
    if (!r->traits.alias) continue;
    const LayerAlias& alias = *r->traits.alias;
    json params = spec.params.json();
    const json& fixed = alias.fixed.json();
    for (const auto& [key, value] : fixed.items()) {
      if (params.contains(key))
        throw Error(spec.params.where() + ": " + spec.type + ": '" + key + "' is fixed (" +
                    spec.type + " is a " + alias.type + " with " + fixed.dump() + ")");
      params[key] = value;
    }
    spec = LayerSpec{alias.type, Params(params, spec.params.where())};
  }
}

std::set<std::string> fusion_options(const Registry& registry, Device device) {
  std::set<std::string> options;
  for (const std::string& type : registry.available("layer", device))
    for (const FusionRule& rule : fusion_rules(registry, type, device)) options.insert(rule.option);
  return options;
}

namespace {

// A layer that sets a parameter its own rules write was fused already (or written fused).
bool fused_already(const LayerSpec& spec, const std::vector<FusionRule>& rules) {
  for (const FusionRule& rule : rules)
    for (const std::string& key : rule.into)
      if (spec.params.json().contains(key)) return true;
  return false;
}

}  // namespace

void fuse_layers(std::vector<LayerSpec>& specs, const Fusions& fusions, const Registry& registry,
                 Device device) {
  if (fusions.empty()) return;
  std::map<std::string, std::vector<FusionRule>> rules_of;
  auto rules = [&](const std::string& type) -> const std::vector<FusionRule>& {
    auto it = rules_of.find(type);
    if (it == rules_of.end())
      it = rules_of.emplace(type, fusion_rules(registry, type, device)).first;
    return it->second;
  };
  // The rule of specs[i] that applies to the layers after it, or null.
  auto applicable = [&](std::size_t i) -> const FusionRule* {
    if (fused_already(specs[i], rules(specs[i].type))) return nullptr;
    for (const FusionRule& rule : rules(specs[i].type)) {
      if (!fusions.count(rule.option) || i + rule.absorbs.size() >= specs.size()) continue;
      bool matches = true;
      for (std::size_t k = 0; k < rule.absorbs.size() && matches; ++k) {
        const LayerSpec& next = specs[i + 1 + k];
        matches = next.type == rule.absorbs[k] && !fused_already(next, rules(next.type));
      }
      if (matches) return &rule;
    }
    return nullptr;
  };
  std::vector<LayerSpec> out;
  for (std::size_t i = 0; i < specs.size();) {
    const FusionRule* rule = applicable(i);
    if (!rule) {
      out.push_back(specs[i++]);
      continue;
    }
    const json defaults = json::parse(registry.find("layer", specs[i].type, device)->parameters);
    json fused = specs[i].params.json();
    for (std::size_t k = 0; k < rule->absorbs.size(); ++k) {
      const LayerSpec& absorbed = specs[i + 1 + k];
      const auto def = defaults.find(rule->into[k]);
      fused[rule->into[k]] =
          def != defaults.end() && def->is_string() ? json(absorbed.type) : absorbed.params.json();
    }
    out.push_back(LayerSpec{specs[i].type, Params(fused, specs[i].params.where())});
    i += 1 + rule->absorbs.size();
  }
  specs = std::move(out);
}

namespace {
// Replaces the "$name" strings of j in place; where names j in errors.
void substitute(json& j, const std::map<std::string, std::int64_t>& sizes,
                const std::string& where) {
  if (j.is_object() || j.is_array()) {
    for (auto it = j.begin(); it != j.end(); ++it)
      substitute(*it, sizes, j.is_object() ? where + "." + it.key() : where + "[]");
    return;
  }
  if (!j.is_string()) return;
  const std::string& text = j.get_ref<const std::string&>();
  if (text.empty() || text[0] != '$') return;
  const auto found = sizes.find(text);
  if (found == sizes.end() || found->second <= 0)
    throw Error(where + ": '" + text + "' is not a size this run's dataset gives (it gives: " +
                [&] {
                  std::string known;
                  for (const auto& [name, value] : sizes)
                    if (value > 0) known += (known.empty() ? "" : ", ") + name;
                  return known.empty() ? std::string("none") : known;
                }() +
                ")");
  j = found->second;
}
}  // namespace

void substitute_sizes(std::vector<LayerSpec>& specs,
                      const std::map<std::string, std::int64_t>& sizes) {
  for (LayerSpec& spec : specs) {
    json j = spec.params.json();
    substitute(j, sizes, spec.params.where());
    spec.params = Params(j, spec.params.where());
  }
}

std::vector<LayerSpec> parse_layer_list(const json& layers, const std::string& where) {
  std::vector<LayerSpec> out;
  parse_layers(layers, where, out);
  return out;
}

namespace {

constexpr int kMaxBaseDepth = 8;  // a pinned variant of a pinned variant of ...

std::optional<Shape> parse_input_shape(const json& j, const std::string& where) {
  if (!j.contains("input_shape")) return {};
  const json& s = j["input_shape"];
  if (!s.is_array() || s.empty() || s.size() > 3 ||
      !std::all_of(s.begin(), s.end(), [](const json& d) {
        return d.is_number_integer() && d.get<std::int64_t>() > 0;
      }))
    throw Error(where + ": input_shape: expected 1 to 3 positive integers (H, W, C), got " +
                s.dump());
  return Shape::from(s.begin(), s.end());
}

// The layers of the model object `j`: its own, or its base's (read from the file the base names).
ModelSpec parse_spec(const json& j, const std::string& where,
                     const std::filesystem::path& relative_to, int depth) {
  if (!j.is_object()) throw Error(where + ": expected a model object with \"layers\"");
  static const std::vector<std::string> kKeys = {"name",   "input_shape", "classes",
                                                 "layers", "base",        "description"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (std::find(kKeys.begin(), kKeys.end(), it.key()) == kKeys.end()) {
      std::string hint = closest_match(it.key(), kKeys);
      throw Error(where + ": unknown key '" + it.key() + "'" +
                  (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
  ModelSpec spec;
  if (j.contains("base")) {
    const json& base = j["base"];
    if (!base.is_string() || base.get<std::string>().empty())
      throw Error(where + ": base: expected a model name or file, got " + base.dump());
    if (j.contains("layers"))
      throw Error(where +
                  ": has both \"base\" and \"layers\": a pinned variant takes its "
                  "layers from its base");
    if (depth >= kMaxBaseDepth)
      throw Error(where + ": base: more than " + std::to_string(kMaxBaseDepth) +
                  " bases deep (does a base name itself?)");
    const std::filesystem::path file =
        resolve_model_path(base.get<std::string>(), relative_to, "base");
    spec = parse_spec(read_json_file(file), file.string(), file, depth + 1);
    spec.name.clear();  // the variant's own, below
  } else {
    if (!j.contains("layers")) throw Error(where + ": missing \"layers\"");
    if (expanded_layers(j["layers"]) > kMaxModelLayers)
      throw Error(where + ": layers: its repeat blocks expand to more than " +
                  std::to_string(kMaxModelLayers) +
                  " layers (the largest zoo model has about 3,600)");
    parse_layers(j["layers"], where + ": layers", spec.layers);
    if (spec.layers.empty()) throw Error(where + ": layers: the model has no layers");
  }
  if (j.contains("name")) {
    if (!j["name"].is_string()) throw Error(where + ": name: expected a string");
    spec.name = j["name"].get<std::string>();
  }
  if (auto shape = parse_input_shape(j, where)) spec.input_shape = shape;
  if (j.contains("classes")) {
    const json& c = j["classes"];
    if (!c.is_number_integer() || c.get<std::int64_t>() < 1 ||
        c.get<std::int64_t>() > (std::int64_t{1} << 31))
      throw Error(where + ": classes: expected a positive integer, got " + c.dump());
    spec.classes = c.get<std::int64_t>();
  }
  return spec;
}

}  // namespace

ModelSpec parse_model_spec(const json& j, const std::string& where,
                           const std::filesystem::path& relative_to) {
  return parse_spec(j, where, relative_to, 0);
}

ModelSpec load_model_spec(const std::filesystem::path& file) {
  ModelSpec spec = parse_spec(read_json_file(file), file.string(), file, 0);
  spec.file = file;
  if (spec.name.empty()) spec.name = file.stem().string();
  return spec;
}

}  // namespace dtnn
