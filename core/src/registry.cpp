#include "dtnn/registry.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "dtnn/config.hpp"
#include "dtnn/executable_dir.hpp"
#include "dtnn/params.hpp"
#include "dtnn/version.hpp"

namespace dtnn {

namespace fs = std::filesystem;
using nlohmann::json;
using Library = boost::dll::shared_library;

const char* to_string(PluginRecord::Status s) {
  switch (s) {
    case PluginRecord::Status::ok:
      return "ok";
    case PluginRecord::Status::unavailable:
      return "unavailable";
    case PluginRecord::Status::rejected:
      return "rejected";
    case PluginRecord::Status::load_failed:
      return "load-failed";
  }
  return "?";
}

namespace {

const std::set<std::string> kKinds = {
    "layer", "conv",   "optimizer", "scheduler",           "dataset", "communicator",
    "loss",  "metric", "device",    "device_communicator", "codec",   "energy"};

// "conv_direct.avx2.so" is level avx2 of the plugin file "conv_direct"; "conv_direct.so" the floor.
std::pair<std::string, isa::Level> plugin_file_level(const fs::path& file) {
  const fs::path stem = file.stem();
  const std::string tag = stem.extension().string();
  if (!tag.empty())
    if (std::optional<isa::Level> level = isa::parse(tag.substr(1)))
      return {stem.stem().string(), *level};
  return {stem.string(), isa::Level::portable};
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& e : v) s += (s.empty() ? "" : ", ") + e;
  return s.empty() ? "(none)" : s;
}

// Why code of `level` does not run under `ceiling`.
std::string why_not_runs(isa::Level level, isa::Level ceiling) {
  const std::vector<std::string> missing = isa::missing_features(level);
  return std::string("built for ") + isa::name(level) + ", above this process's ceiling " +
         isa::name(ceiling) +
         (missing.empty() ? std::string(" (DTNN_ISA lowered it)")
                          : " (this CPU lacks " + join(missing) + ")");
}

// Checks one value against its default: numbers stay numbers (integers stay integral),
// strings stay strings, and so on. A null default accepts anything.
void check_type(const json& def, const json& got, const std::string& where) {
  auto bad = [&](const char* expected) {
    throw Error(where + ": expected " + expected + ", got " + got.dump());
  };
  if (def.is_null()) return;
  if (def.is_number_integer()) {
    if (!got.is_number() ||
        (got.is_number_float() &&
         got.get<double>() != static_cast<double>(static_cast<std::int64_t>(got.get<double>()))))
      bad("an integer");
  } else if (def.is_number()) {
    if (!got.is_number()) bad("a number");
  } else if (def.is_boolean()) {
    if (!got.is_boolean()) bad("true or false");
  } else if (def.is_string()) {
    if (!got.is_string()) bad("a string");
  } else if (def.is_array()) {
    if (!got.is_array() && !got.is_number()) bad("a list");
  } else if (def.is_object()) {
    if (!got.is_object()) bad("an object");
  }
}

}  // namespace

fs::path executable_dir() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

fs::path core_library_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&core_library_dir), &info) == 0 || !info.dli_fname)
    return {};
  std::error_code ec;
  const fs::path library = fs::canonical(info.dli_fname, ec);
  return ec ? fs::path() : library.parent_path();
}

std::vector<fs::path> Registry::default_folders(const std::vector<std::string>& extra_folders) {
  std::vector<fs::path> out;
  for (const auto& f : extra_folders) out.emplace_back(f);
  if (const char* env = std::getenv("DTNN_PLUGIN_PATH")) {
    std::stringstream ss(env);
    std::string item;
    while (std::getline(ss, item, ':'))
      if (!item.empty()) out.emplace_back(item);
  }
  fs::path exe = executable_dir();
  if (!exe.empty()) out.push_back(exe.parent_path() / "lib" / "dtnn" / "plugins");
  out.push_back(fs::path(DTNN_INSTALL_PREFIX) / "lib" / "dtnn" / "plugins");
  return out;
}

Registry::Registry(std::vector<fs::path> folders, std::optional<isa::Level> ceiling)
    : ceiling_(ceiling ? *ceiling : isa::ceiling()), reports_choices_(!ceiling) {
  std::set<fs::path> seen;
  for (auto& f : folders) {  // a folder named twice (DTNN_PLUGIN_PATH and the default) counts once
    std::error_code ec;
    fs::path key = fs::weakly_canonical(f, ec);
    if (ec) key = f.lexically_normal();
    if (!key.has_filename()) key = key.parent_path();  // "dir/" is "dir"
    if (!seen.insert(key).second) continue;
    folders_.push_back(std::move(f));
    scan(folders_.back());
  }
}

void Registry::scan(const fs::path& folder) {
  std::error_code ec;
  if (fs::is_regular_file(folder, ec))  // a plugin file named on its own
    return load_best({{plugin_file_level(folder).second, folder}});
  if (!fs::is_directory(folder, ec)) return;  // absent folders of the search order are normal
  std::map<std::string, std::vector<Variant>> plugins;  // the files of each plugin, by level
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.is_regular_file() && e.path().extension() == DTNN_PLUGIN_SUFFIX) {
      auto [base, level] = plugin_file_level(e.path());
      plugins[base].push_back({level, e.path()});
    }
  for (auto& [base, variants] : plugins) {
    std::sort(variants.begin(), variants.end(),
              [](const Variant& a, const Variant& b) { return a.level < b.level; });
    load_best(variants);
  }
}

void Registry::load_best(const std::vector<Variant>& variants) {
  const Variant* best = nullptr;
  for (const Variant& v : variants)
    if (v.level <= ceiling_ && (!best || v.level > best->level)) best = &v;
  if (!best) {  // never opened: its static initialisers would run code of its level
    PluginRecord rec;
    rec.file = variants.front().file;
    rec.status = PluginRecord::Status::unavailable;
    rec.reason = why_not_runs(variants.front().level, ceiling_);
    for (const Variant& v : variants) rec.levels_built.push_back(v.level);
    records_.push_back(std::move(rec));
    return;
  }
  load(best->file, variants.size() > 1 || best->level != isa::Level::portable
                       ? variants
                       : std::vector<Variant>{});
}

// Fills rec from the descriptor; the reason it is refused (an unknown kind or device, malformed
// defaults or traits, a name taken on that device), or "".
std::string Registry::read_descriptor(const PluginDescriptor& d, PluginRecord& rec) const {
  rec.descriptor = &d;
  rec.kind = d.kind ? d.kind : "";
  rec.name = d.name ? d.name : "";
  rec.description = d.description ? d.description : "";
  rec.parameters = d.parameters ? d.parameters : "{}";
  rec.traits_json = d.traits ? d.traits : "{}";
  if (!kKinds.count(rec.kind)) return "unknown plugin kind '" + rec.kind + "'";
  const std::string device = d.device ? d.device : "";
  if (device != "cpu" && device != "cuda")
    return "unknown device '" + device + "' (expected \"cpu\" or \"cuda\")";
  rec.device = device == "cuda" ? Device::cuda : Device::cpu;
  const json defaults = json::parse(rec.parameters, nullptr, false);
  if (defaults.is_discarded() || !defaults.is_object())
    return "its parameter defaults are not a JSON object";
  const json traits = json::parse(rec.traits_json, nullptr, false);
  if (traits.is_discarded() || !traits.is_object()) return "its traits are not a JSON object";
  try {
    rec.traits = read_plugin_traits(traits, defaults);
  } catch (const Error& e) {
    return "its " + std::string(e.what());
  }
  if (const PluginRecord* other = find(rec.kind, rec.name, rec.device);
      other && other->status == PluginRecord::Status::ok)
    return "duplicate " + rec.kind + " plugin '" + rec.name + "' on " + device +
           " (already loaded from " + other->file.string() + ")";
  return "";
}

void Registry::load(const fs::path& file, const std::vector<Variant>& variants) {
  PluginRecord rec;
  rec.file = file;
  for (const Variant& v : variants) {
    rec.levels_built.push_back(v.level);
    if (v.file == file) rec.level = v.level;
  }
  auto reject = [&](PluginRecord::Status status, const std::string& why) {
    rec.status = status;
    rec.reason = why;
    // An unavailable plugin is expected (GPU plugins on a machine without a GPU): `dtnn plugins`
    // lists it, and asking for it says why; only broken files are warned about at start-up.
    if (status != PluginRecord::Status::unavailable)
      warnings_.push_back(std::string(to_string(status)) + " " + file.string() + ": " + why);
    records_.push_back(std::move(rec));
  };

  auto lib = std::make_shared<Library>();
  boost::dll::fs::error_code ec;
  // RTLD_NODELETE: dlclose never unmaps a plugin, so no object can outlive its code.
  lib->load(boost::dll::fs::path(file.native()), ec,
            static_cast<boost::dll::load_mode::type>(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE));
  if (ec) {
    const char* dl = ::dlerror();  // Boost 1.74 reports every failure as "Bad file descriptor"
    return reject(PluginRecord::Status::load_failed,
                  "cannot load: " + (dl ? std::string(dl) : ec.message()));
  }
  if (!lib->has("dtnn_plugin_abi_version"))
    return reject(PluginRecord::Status::rejected,
                  "not a dtnn plugin (no dtnn_plugin_abi_version symbol)");
  const std::uint32_t abi = lib->get<const std::uint32_t>("dtnn_plugin_abi_version");
  std::string fingerprint =
      lib->has("dtnn_plugin_fingerprint") ? &lib->get<const char>("dtnn_plugin_fingerprint") : "?";
  if (abi != kPluginAbiVersion)
    return reject(PluginRecord::Status::rejected,
                  "stale plugin: built for plugin ABI v" + std::to_string(abi) + " (" +
                      fingerprint + "), this dtnn needs ABI v" + std::to_string(kPluginAbiVersion) +
                      "; rebuild the plugin");
  if (fingerprint != DTNN_BUILD_FINGERPRINT)
    return reject(PluginRecord::Status::rejected, "built with '" + fingerprint +
                                                      "', this dtnn is '" DTNN_BUILD_FINGERPRINT
                                                      "'; rebuild the plugin against this dtnn");
  if (!lib->has("dtnn_plugin_descriptor"))
    return reject(PluginRecord::Status::rejected, "no dtnn_plugin_descriptor (use DTNN_PLUGIN)");

  using DescriptorFn = const PluginDescriptor&();
  const PluginDescriptor& d = lib->get_alias<DescriptorFn>("dtnn_plugin_descriptor")();
  rec.library = lib;
  if (const std::string why = read_descriptor(d, rec); !why.empty())
    return reject(PluginRecord::Status::rejected, why);
  if (d.probe) {
    std::string why;
    bool ok = false;
    try {
      ok = d.probe(why);
    } catch (const std::exception& e) {
      why = e.what();
    }
    if (!ok) return reject(PluginRecord::Status::unavailable, why.empty() ? "probe failed" : why);
  }
  if (rec.level && reports_choices_)
    isa::record_choice({rec.kind + "/" + rec.name, rec.levels_built, rec.level});
  records_.push_back(std::move(rec));
}

void Registry::add(PluginRecord record) {
  if (!record.make) throw Error("plugin " + record.kind + "/" + record.name + ": no factory");
  if (record.kind.empty() || record.name.empty())
    throw Error("a plugin needs a kind and a name, got '" + record.kind + "' and '" + record.name +
                "'");
  const std::string plugin = "plugin " + record.kind + "/" + record.name;
  auto object = [&](const std::string& text, const char* what) {
    json parsed = json::parse(text, nullptr, false);
    if (parsed.is_discarded() || !parsed.is_object())
      throw Error(plugin + ": its " + what + " must be a JSON object, got " + text.substr(0, 100));
    return parsed;
  };
  const json parameters = object(record.parameters, "parameters");
  const json traits = object(record.traits_json, "traits");
  try {
    record.traits = read_plugin_traits(traits, parameters);
  } catch (const Error& e) {
    throw Error(plugin + ": its " + e.what());
  }
  for (auto it = records_.begin(); it != records_.end(); ++it) {
    if (it->kind != record.kind || it->name != record.name || it->device != record.device) continue;
    if (!it->make)
      throw Error(record.kind + " plugin '" + record.name + "' is already a plugin from " +
                  it->file.string() + ": choose another name");
    records_.erase(it);
    break;
  }
  record.status = PluginRecord::Status::ok;
  record.descriptor = nullptr;
  records_.push_back(std::move(record));
}

const PluginRecord* Registry::find(std::string_view kind, std::string_view name,
                                   Device device) const {
  const PluginRecord* best = nullptr;
  for (const auto& r : records_)
    if (r.kind == kind && r.name == name && r.device == device &&
        (!best || r.status == PluginRecord::Status::ok))
      best = &r;
  if (best) return best;
  for (const auto& r : records_)
    if (r.kind == kind && r.device == device && r.status == PluginRecord::Status::ok &&
        std::find(r.traits.aliases.begin(), r.traits.aliases.end(), name) != r.traits.aliases.end())
      return &r;
  return nullptr;
}

std::vector<std::string> Registry::available(std::string_view kind, Device device) const {
  std::vector<std::string> out;
  for (const auto& r : records_)
    if (r.kind == kind && r.device == device && r.status == PluginRecord::Status::ok)
      out.push_back(r.name);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Registry::defaults(std::string_view kind) const {
  std::vector<std::string> out;
  for (const std::string& name : available(kind))
    if (find(kind, name)->traits.is_default) out.push_back(name);
  return out;
}

void Registry::require(std::string_view kind, std::string_view name, const std::string& where,
                       Device device) const {
  if (find(kind, name, device)) return;
  auto names = available(kind, device);
  std::string hint = closest_match(std::string(name), names);
  std::string folders;
  for (const auto& f : folders_) folders += (folders.empty() ? "" : ":") + f.string();
  std::string refused;  // files that may have been the one asked for (another name's are not)
  for (const auto& r : records_)
    if (r.status != PluginRecord::Status::ok && (r.kind.empty() || r.kind == kind) &&
        (r.name.empty() || r.name == name))
      refused +=
          "; " + r.file.filename().string() + " was " + to_string(r.status) + ": " + r.reason;
  throw Error((where.empty() ? "" : where + ": ") + "no " + std::string(kind) + " plugin named '" +
              std::string(name) + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
              "; available: " + join(names) + "; searched " + folders + refused);
}

std::shared_ptr<Plugin> Registry::create(std::string_view kind, std::string_view name,
                                         const Params& params,
                                         const std::vector<std::string>& ignored_keys,
                                         Device device) const {
  const PluginRecord* rec = find(kind, name, device);
  if (!rec && device != Device::cpu && find(kind, name)) {
    const std::string on = to_string(device);
    throw Error((params.where().empty() ? "" : params.where() + ": ") + std::string(kind) + " '" +
                std::string(name) + "' has no " + on + " twin; " + std::string(kind) +
                "s that run on " + on + ": " + join(available(kind, device)));
  }
  if (!rec) require(kind, name, params.where(), device);
  if (rec->status != PluginRecord::Status::ok)
    throw Error(std::string(kind) + " plugin '" + std::string(name) + "'" +
                (device == Device::cpu || name == to_string(device)
                     ? ""
                     : std::string(" on ") + to_string(device)) +
                " is " + to_string(rec->status) + " on this machine: " + rec->reason + " (" +
                rec->file.string() + ")");

  json merged = json::parse(rec->parameters);
  if (name != rec->name) {  // an alias's own defaults (traits.alias_defaults), checked at load
    const auto& alias = rec->traits.alias_defaults;
    if (const auto it = alias.find(std::string(name)); it != alias.end())
      for (const auto& [key, value] : it->second.json().items()) merged[key] = value;
  }
  std::vector<std::string> valid;
  for (auto it = merged.begin(); it != merged.end(); ++it) valid.push_back(it.key());
  for (auto it = params.json().begin(); it != params.json().end(); ++it) {
    const std::string& key = it.key();
    if (std::find(ignored_keys.begin(), ignored_keys.end(), key) != ignored_keys.end()) continue;
    auto def = merged.find(key);
    if (def == merged.end()) {
      std::string hint = closest_match(key, valid);
      throw Error(params.key_path(key) + ": unknown parameter of " + std::string(kind) + " '" +
                  std::string(name) + "'" +
                  (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                  "; valid: " + join(valid));
    }
    check_type(*def, it.value(), params.key_path(key));
    *def = it.value();
  }
  PluginContext ctx{this};
  Plugin* raw = nullptr;
  try {
    raw = rec->descriptor ? rec->descriptor->factory(Params(merged, params.where()), ctx)
                          : rec->make(Params(merged, params.where()), ctx);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(std::string(kind) + " plugin '" + std::string(name) + "': " + e.what());
  }
  if (!raw) throw Error(std::string(kind) + " plugin '" + std::string(name) + "' created nothing");
  std::shared_ptr<void> keep = rec->library;
  return std::shared_ptr<Plugin>(raw, [keep](Plugin* p) { delete p; });
}

}  // namespace dtnn
