// The ConvAlgorithm a convolution layer runs (conv2d, conv2d_transpose): the layer's own
// "algorithm" with its "algorithm_params", else the experiment's conv.algorithm with the conv
// object's other keys (dtnn/conv_options.hpp), else the first of i2c and reference that computes
// every pass the layer needs. A fallback is said once in the log (and shows in the
// summary). The algorithm comes prepared for g, with the run's communicator and workspace, and
// computes in the context's precision where its traits list it (float32 elsewhere, said once).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/conv_options.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/log.hpp"
#include "dtnn/params.hpp"
#include "dtnn/registry.hpp"

namespace dtnn::layer_parameters {

inline const char* pass_name(ConvPass pass) {
  return pass == ConvPass::forward         ? "forward"
         : pass == ConvPass::backward_data ? "backward-data"
                                           : "backward-filter";
}

// layer: the layer's type, for the log; needed: the passes of g it always runs; input_gradient:
// the one it runs when the layer before needs its input gradient.
inline std::shared_ptr<ConvAlgorithm> choose_conv_algorithm(
    const LayerBuildContext& ctx, const Params& params, const ConvGeometry& g,
    std::vector<ConvPass> needed, ConvPass input_gradient, const std::string& layer) {
  if (ctx.needs_input_gradient) needed.push_back(input_gradient);
  const std::string own = params.get_string("algorithm");
  const ConvOptions* run = ctx.extensions.find<ConvOptions>();
  const std::string wanted = !own.empty() ? own : run ? run->algorithm : "";
  const Params wanted_params = !own.empty() ? params.get_object("algorithm_params")
                               : run        ? run->params
                                            : Params();
  // The run's conv object also holds the run's own keys; a layer's algorithm_params holds none.
  const std::vector<std::string> run_keys =
      own.empty() ? std::vector<std::string>{"algorithm", "workspace"} : std::vector<std::string>{};
  std::vector<std::string> order{wanted};
  for (const char* fallback : {"i2c", "reference"})
    if (wanted != fallback) order.emplace_back(fallback);
  std::string refusals;
  for (const std::string& name : order) {
    if (name.empty()) continue;
    auto candidate = ctx.registry->create_as<ConvAlgorithm>(
        "conv", name, name == wanted ? wanted_params : Params(), run_keys);
    std::string why;
    const ConvPass* failed = nullptr;
    if (g.groups > 1 && !takes_groups(*ctx.registry, name)) {
      refusals += "'" + name + "' computes no grouped convolutions; ";
      continue;
    }
    // training.precision, where the algorithm has a path for it; float32 (more exact) elsewhere.
    ConvGeometry gp = g;
    gp.precision =
        takes_precision(*ctx.registry, name, ctx.precision) ? ctx.precision : Precision::fp32;
    for (const ConvPass& pass : needed)
      if (!candidate->supports(gp, pass, why)) {
        failed = &pass;
        break;
      }
    if (!failed) {
      if (!refusals.empty())
        log_info_once(layer + " " + g.str() + ": " + refusals + "using '" + candidate->name() +
                      "'");
      if (gp.precision != ctx.precision)
        log_info_once(layer + ": conv algorithm '" + candidate->name() + "' has no " +
                      to_string(ctx.precision) + " path; its products run in fp32");
      candidate->set_communicator(ctx.communicator);
      candidate->set_workspace(ctx.workspace);
      candidate->prepare(gp);
      return candidate;
    }
    refusals += "'" + name + "' does not support " + pass_name(*failed) + " (" + why + "); ";
  }
  throw Error("no convolution algorithm supports " + g.str());  // reference supports all
}

}  // namespace dtnn::layer_parameters
