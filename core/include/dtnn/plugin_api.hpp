// The macros a plugin source uses to export itself, once per shared object:
//
//   DTNN_PLUGIN("layer", "relu", "rectified linear unit, y = max(x, 0)", R"({})", create_relu)
//
// where create_relu has the signature of dtnn::PluginFactory; or DTNN_EXPORT_PLUGIN (below) for a
// descriptor with a device, traits or a probe. See docs/plugin-authoring.md.
#pragma once
#include <boost/config.hpp>
#include <boost/dll/alias.hpp>
#include <cstdint>

#include "dtnn/params.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/version.hpp"

#ifndef DTNN_PLUGIN_ABI_VERSION
#define DTNN_PLUGIN_ABI_VERSION ::dtnn::kPluginAbiVersion
#endif

// Exports the descriptor given by designated initialisers (the fields of PluginDescriptor after
// abi_version, in their order):
//
//   DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "conv2d", .description = "...",
//                      .parameters = kParameters, .traits = kTraits, .factory = create)
#define DTNN_EXPORT_PLUGIN(...)                                                                   \
  extern "C" BOOST_SYMBOL_EXPORT const std::uint32_t dtnn_plugin_abi_version =                    \
      DTNN_PLUGIN_ABI_VERSION;                                                                    \
  extern "C" BOOST_SYMBOL_EXPORT const char dtnn_plugin_fingerprint[] = DTNN_BUILD_FINGERPRINT;   \
  namespace dtnn_plugin_detail {                                                                  \
  inline const ::dtnn::PluginDescriptor& descriptor() {                                           \
    static const ::dtnn::PluginDescriptor d{.abi_version = DTNN_PLUGIN_ABI_VERSION, __VA_ARGS__}; \
    return d;                                                                                     \
  }                                                                                               \
  }                                                                                               \
  BOOST_DLL_ALIAS(dtnn_plugin_detail::descriptor, dtnn_plugin_descriptor)

// The common case: a CPU plugin, no traits, always available.
#define DTNN_PLUGIN(Kind, Name, Description, ParametersJson, Factory)        \
  DTNN_EXPORT_PLUGIN(.kind = Kind, .name = Name, .description = Description, \
                     .parameters = ParametersJson, .factory = Factory)
