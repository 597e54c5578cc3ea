// A plugin whose availability probe says no, as a GPU plugin does on a machine without a GPU: the
// registry must list it as unavailable with the probe's reason, and refuse to create it.
#include "dtnn/layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
bool probe(std::string& why_not) {
  why_not = "no test accelerator on this machine";
  return false;
}
dtnn::Plugin* create(const dtnn::Params&, const dtnn::PluginContext&) { return nullptr; }
}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "test_unavailable",
                   .description = "test double: always unavailable", .probe = probe,
                   .factory = create)
