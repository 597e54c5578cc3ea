#include "adam.hpp"

#include "dtnn/plugin_api.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::optimizers::Adam<dtnn::HostRules>(p);
}
}  // namespace

DTNN_PLUGIN("optimizer", "adam", dtnn::optimizers::kAdamDescription,
            dtnn::optimizers::kAdamParameters, create)
