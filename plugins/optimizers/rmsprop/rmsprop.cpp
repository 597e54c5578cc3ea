#include "rmsprop.hpp"

#include "dtnn/plugin_api.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::optimizers::RmsProp<dtnn::HostRules>(p);
}
}  // namespace

DTNN_PLUGIN("optimizer", "rmsprop", dtnn::optimizers::kRmsPropDescription,
            dtnn::optimizers::kRmsPropParameters, create)
