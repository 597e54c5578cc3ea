// The parameters of a layer with a weight tensor and, when it uses them, biases (fc, the
// convolutions, patch_embedding): "weights", then "biases", each with its gradient.
#pragma once
#include <vector>

#include "dtnn/layer.hpp"

namespace dtnn::layer_parameters {

inline std::vector<Parameter> weights_and_biases(const Tensor& w, const Tensor& dw, const Tensor& b,
                                                 const Tensor& db, bool use_bias) {
  std::vector<Parameter> p{{"weights", w, dw}};
  if (use_bias) p.push_back({"biases", b, db});
  return p;
}

}  // namespace dtnn::layer_parameters
