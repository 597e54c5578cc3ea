// A loss's class weights (PyDTNN's --loss-weights, PyTorch's weight=): "weights": [w_0, ...], one
// non-negative number per class, or [] for none (every class 1). A weighted loss is the weighted
// mean over rows: sum_r w[class of r] l_r / sum_r w[class of r], as PyTorch's mean reduction.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/params.hpp"

namespace dtnn::losses {

class ClassWeights {
 public:
  ClassWeights(const Params& p, std::string who) : who_(std::move(who)) {
    const nlohmann::json& j = p.json().at("weights");
    if (!j.is_array()) p.fail("weights", "a list of non-negative numbers, one per class");
    for (const nlohmann::json& w : j) {
      if (!w.is_number() || w.get<double>() < 0)
        p.fail("weights", "a list of non-negative numbers, one per class");
      weights_.push_back(w.get<double>());
    }
  }
  bool empty() const { return weights_.empty(); }
  // Class c's weight; `classes` checks the list against the predictions' width.
  double of(std::int64_t c, std::int64_t classes) const {
    if (weights_.empty()) return 1.0;
    if (static_cast<std::int64_t>(weights_.size()) != classes)
      throw Error(who_ + ": " + std::to_string(weights_.size()) + " class weights for " +
                  std::to_string(classes) + " classes: expected one weight per class");
    return weights_[static_cast<std::size_t>(c)];
  }

 private:
  std::string who_;
  std::vector<double> weights_;
};

}  // namespace dtnn::losses
