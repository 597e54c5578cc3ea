// Plugin: the common base of every object a plugin creates, and the descriptor a plugin exports.
//
// A plugin is one shared object exporting (see plugin_api.hpp for the macro that writes them):
//   extern "C" const uint32_t dtnn_plugin_abi_version;  read before any C++ type is touched
//   extern "C" const char     dtnn_plugin_fingerprint[]; compiler + dtnn version it was built with
//   dtnn_plugin_descriptor    Boost.DLL alias of a function returning its PluginDescriptor
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

class Params;
class Registry;

// Bump when any interface, descriptor or shared type changes layout or meaning.
inline constexpr std::uint32_t kPluginAbiVersion = 21;

class DTNN_CORE_EXPORT Plugin {
 public:
  virtual ~Plugin();  // out of line: the key function, so typeinfo lives once, in the core
};

// What a factory may use besides its parameters.
struct PluginContext {
  const Registry* registry = nullptr;  // to create other plugins through core interfaces
};

using PluginFactory = Plugin* (*)(const Params& params, const PluginContext& context);
// Returns false and explains in why_not when the plugin cannot run here (e.g. no GPU).
using PluginProbe = bool (*)(std::string& why_not);

// Written by the export macros of plugin_api.hpp (a plugin fills it with designated initialisers).
struct PluginDescriptor {
  std::uint32_t abi_version = 0;
  const char* kind = "";          // "layer", "conv", "optimizer", "scheduler", "dataset",
                                  // "communicator", "loss", "metric", "device", ...
  const char* name = "";          // unique within its kind and device; the name configs use
  const char* device = "cpu";     // where the objects it creates compute: "cpu" or "cuda". A
                                  // plugin's twin on another device has the same kind and name.
  const char* description = "";   // one line
  const char* parameters = "{}";  // JSON object: every parameter with its default
  // JSON object: what the core may know of the plugin before creating anything, by kind (a
  // layer's fusions, a communicator's launchers; docs/plugin-authoring.md lists them).
  const char* traits = "{}";
  PluginProbe probe = nullptr;  // null: always available
  PluginFactory factory = nullptr;
};

}  // namespace dtnn
