// The one macro a plugin source uses to export itself:
//
//   DTNN_PLUGIN("layer", "relu", "rectified linear unit, y = max(x, 0)", R"({})", create_relu)
//
// where create_relu has the signature of dtnn::PluginFactory. See docs/plugin-authoring.md.
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

#define DTNN_PLUGIN_WITH_PROBE(Kind, Name, Description, ParametersJson, Factory, Probe)          \
  extern "C" BOOST_SYMBOL_EXPORT const std::uint32_t dtnn_plugin_abi_version =                   \
      DTNN_PLUGIN_ABI_VERSION;                                                                   \
  extern "C" BOOST_SYMBOL_EXPORT const char dtnn_plugin_fingerprint[] = DTNN_BUILD_FINGERPRINT;  \
  namespace dtnn_plugin_detail {                                                                 \
  inline const ::dtnn::PluginDescriptor& descriptor() {                                          \
    static const ::dtnn::PluginDescriptor d{DTNN_PLUGIN_ABI_VERSION, Kind,  Name,   Description, \
                                            ParametersJson,          Probe, Factory};            \
    return d;                                                                                    \
  }                                                                                              \
  }                                                                                              \
  BOOST_DLL_ALIAS(dtnn_plugin_detail::descriptor, dtnn_plugin_descriptor)

#define DTNN_PLUGIN(Kind, Name, Description, ParametersJson, Factory) \
  DTNN_PLUGIN_WITH_PROBE(Kind, Name, Description, ParametersJson, Factory, nullptr)
