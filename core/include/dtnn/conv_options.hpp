// ConvOptions: the experiment's conv object as the convolution layers see it at build time, the
// layer extension "conv" (layer_extensions.hpp) that the model sets for all of its chains, blocks'
// paths included. A conv2d or conv2d_transpose runs `algorithm` with `params` (the object's other
// keys, messages naming them where the experiment wrote them) unless it names an "algorithm" of
// its own, which then takes its own "algorithm_params".
#pragma once
#include <string>
#include <string_view>

#include "dtnn/params.hpp"

namespace dtnn {

struct ConvOptions {
  static constexpr std::string_view kExtensionName = "conv";
  std::string algorithm;  // conv.algorithm
  Params params;          // the conv object ("algorithm" and "workspace" in it are the run's)
};

}  // namespace dtnn
