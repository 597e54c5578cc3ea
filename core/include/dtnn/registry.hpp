// Registry: discovers plugins in folders, checks them, creates objects by kind and name.
//
// Search order: --plugin-path folders, DTNN_PLUGIN_PATH (colon-separated), the folder beside
// the executable (../lib/dtnn/plugins), the install folder. A bad .so is a warning naming the
// file and the reason; asking for a missing plugin is an Error that lists what is available.
// Libraries are opened with RTLD_NODELETE: nothing is ever unmapped while the process lives,
// so an object a plugin created can never outlive its code.
//
// A plugin and its twins on other devices share a kind and a name and differ in their descriptor's
// device (`relu` on cpu, `relu` on cuda): every lookup names the device, the cpu by default.
//
// A plugin built once per instruction-set level (kind_name.so, kind_name.avx2.so,
// kind_name.avx512.so; dtnn/isa.hpp) is one plugin: the registry opens only the file of the best
// level not above its ceiling (by default the process's: what the CPU runs, lowered by DTNN_ISA)
// and, when that ceiling is the process's, records the choice (isa::choices()). A file of a higher
// level is never opened: its static initialisers are code of that level too.
#pragma once
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/error.hpp"
#include "dtnn/isa.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/plugin_traits.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class Params;

struct PluginRecord {
  enum class Status { ok, unavailable, rejected, load_failed };
  Status status = Status::ok;
  std::string kind, name, description, parameters;  // parameters: JSON with defaults
  Device device = Device::cpu;
  std::string traits_json = "{}";  // PluginDescriptor::traits as declared (a JSON object)
  PluginTraits traits;             // read from traits_json at load (plugin_traits.hpp)
  std::filesystem::path file;
  std::string reason;  // why not ok
  // For a plugin built per instruction-set level: the levels found and the one loaded.
  std::vector<isa::Level> levels_built;
  std::optional<isa::Level> level;
  const PluginDescriptor* descriptor = nullptr;
  std::shared_ptr<void> library;  // keeps the shared object open
  // A plugin made in this process instead of loaded from a file (a Python class: dtnn.register):
  // its factory, used where descriptor is null.
  std::function<Plugin*(const Params&, const PluginContext&)> make;
};

DTNN_CORE_EXPORT const char* to_string(PluginRecord::Status s);

class DTNN_CORE_EXPORT Registry {
 public:
  // ceiling: the highest instruction-set level of plugin file to load (default: isa::ceiling(),
  // which throws dtnn::Error for a bad DTNN_ISA).
  explicit Registry(std::vector<std::filesystem::path> folders,
                    std::optional<isa::Level> ceiling = std::nullopt);
  // The folders of the search order above, extra_folders first.
  static std::vector<std::filesystem::path> default_folders(
      const std::vector<std::string>& extra_folders = {});

  const std::vector<std::filesystem::path>& folders() const { return folders_; }
  const std::vector<PluginRecord>& records() const { return records_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Adds a plugin made in this process (record.make creates it; its kind, name, description,
  // parameters and traits as a loaded one's): it replaces an earlier added one of the same kind
  // and name, and may not take a loaded plugin's name (Error). Pointers to records taken before
  // are invalid afterwards.
  void add(PluginRecord record);

  // The record of kind/name on device (ok or not), or null. A name no plugin has may be a
  // plugin's alias (its traits.aliases).
  const PluginRecord* find(std::string_view kind, std::string_view name,
                           Device device = Device::cpu) const;
  // Returns when kind/name has a record on device (ok or not); else the Error create gives for a
  // missing plugin (the closest name, what is available, the folders searched), prefixed by where.
  void require(std::string_view kind, std::string_view name, const std::string& where,
               Device device = Device::cpu) const;
  // The names of kind's plugins that are ok on device, sorted.
  std::vector<std::string> available(std::string_view kind, Device device = Device::cpu) const;

  // The ok cpu plugins of kind whose traits say {"default": true}: what an experiment uses where it
  // names none of that kind (sorted).
  std::vector<std::string> defaults(std::string_view kind) const;

  // Creates kind/name's plugin for device with params merged over the plugin's defaults; unknown
  // keys are errors naming the key and the closest valid one. ignored_keys are left out of that
  // check. A plugin that has no twin on device is an error that lists those that have.
  std::shared_ptr<Plugin> create(std::string_view kind, std::string_view name, const Params& params,
                                 const std::vector<std::string>& ignored_keys = {},
                                 Device device = Device::cpu) const;

  template <class T>
  std::shared_ptr<T> create_as(std::string_view kind, std::string_view name, const Params& params,
                               const std::vector<std::string>& ignored_keys = {},
                               Device device = Device::cpu) const {
    std::shared_ptr<Plugin> p = create(kind, name, params, ignored_keys, device);
    auto t = std::dynamic_pointer_cast<T>(p);
    if (!t)
      throw Error("plugin " + std::string(kind) + "/" + std::string(name) +
                  " created an object of the wrong interface");
    return t;
  }

 private:
  struct Variant {  // one file of a plugin built per level
    isa::Level level;
    std::filesystem::path file;
  };
  void scan(const std::filesystem::path& folder);
  // The variant to load of one plugin's files (all of them when it has one file only).
  void load_best(const std::vector<Variant>& variants);
  void load(const std::filesystem::path& file, const std::vector<Variant>& variants = {});
  std::string read_descriptor(const PluginDescriptor& descriptor, PluginRecord& record) const;

  isa::Level ceiling_;
  bool reports_choices_;  // the process's ceiling: its choices are the process's (isa::choices())
  std::vector<std::filesystem::path> folders_;
  std::vector<PluginRecord> records_;
  std::vector<std::string> warnings_;
};

}  // namespace dtnn
