#include "nadam.hpp"

#include "dtnn/plugin_api.hpp"

namespace {
dtnn::Plugin* create(const dtnn::Params& p, const dtnn::PluginContext&) {
  return new dtnn::optimizers::Nadam<dtnn::HostRules>(p);
}
}  // namespace

DTNN_PLUGIN("optimizer", "nadam", dtnn::optimizers::kNadamDescription,
            dtnn::optimizers::kNadamParameters, create)
