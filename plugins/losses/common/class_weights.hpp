// A loss's class weights (PyDTNN's --loss-weights, PyTorch's weight=): "weights": [w_0, ...], one
// non-negative number per class, or [] for none (every class 1). A weighted loss is the weighted
// mean over rows (dtnn/loss_rule.hpp), as PyTorch's mean reduction; the executors check that there
// is one weight per class.
#pragma once
#include <nlohmann/json.hpp>
#include <vector>

#include "dtnn/params.hpp"

namespace dtnn::losses {

inline std::vector<double> read_class_weights(const Params& p) {
  const nlohmann::json& j = p.json().at("weights");
  if (!j.is_array()) p.fail("weights", "a list of non-negative numbers, one per class");
  std::vector<double> weights;
  for (const nlohmann::json& w : j) {
    if (!w.is_number() || w.get<double>() < 0)
      p.fail("weights", "a list of non-negative numbers, one per class");
    weights.push_back(w.get<double>());
  }
  return weights;
}

}  // namespace dtnn::losses
