#include "lion.hpp"

#include "dtnn/plugin_api.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new example::Lion<dtnn::HostRules>(p);
}
}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "optimizer", .name = "lion",
                   .description =
                       "example out-of-tree optimizer: Lion (sign of an interpolated "
                       "momentum)",
                   .parameters = example::kParameters, .traits = R"({"conformance": [{"params": {}},
                                                 {"params": {"decay": 0.1, "beta1": 0.5}}]})",
                   .factory = create)
