#include "sgd.hpp"

#include "dtnn/plugin_api.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::optimizers::Sgd<dtnn::HostRules>(p);
}
}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "optimizer", .name = "sgd",
                   .description = dtnn::optimizers::kSgdDescription,
                   .parameters = dtnn::optimizers::kSgdParameters, .traits = R"({"default": true})",
                   .factory = create)
