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
  // An Error unless there is a weight for each of `classes` (or none at all): once per call of a
  // loss, before its loops read weights with at().
  void check(std::int64_t classes) const {
    if (!weights_.empty() && static_cast<std::int64_t>(weights_.size()) != classes)
      throw Error(who_ + ": " + std::to_string(weights_.size()) + " class weights for " +
                  std::to_string(classes) + " classes: expected one weight per class");
  }
  // The weights as given (empty: none), for a device twin to upload.
  const std::vector<double>& values() const { return weights_; }
  // Class c's weight (1 without weights); check() first.
  double at(std::int64_t c) const {
    return weights_.empty() ? 1.0 : weights_[static_cast<std::size_t>(c)];
  }

 private:
  std::string who_;
  std::vector<double> weights_;
};

}  // namespace dtnn::losses
