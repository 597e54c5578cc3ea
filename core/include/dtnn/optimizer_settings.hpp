// The hyperparameters of sgd and adam read and checked once, for the CPU plugins and their CUDA
// twins alike (errors name the key and what was expected).
#pragma once
#include <cmath>

#include "dtnn/core_export.hpp"
#include "dtnn/optimizer.hpp"

namespace dtnn {

struct SgdSettings {
  UpdateRule rule = UpdateRule::textbook;
  double lr = 0.01, momentum = 0, decay = 0;
  bool nesterov = false;
};
DTNN_CORE_EXPORT SgdSettings parse_sgd_settings(const Params& p);

struct AdamSettings {
  UpdateRule rule = UpdateRule::textbook;
  double lr = 0.001, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, decay = 0;
  // The bias corrections of step t (from 1): 1 - beta1^t and 1 - beta2^t.
  double correction1(double t) const { return 1.0 - std::pow(beta1, t); }
  double correction2(double t) const { return 1.0 - std::pow(beta2, t); }
};
DTNN_CORE_EXPORT AdamSettings parse_adam_settings(const Params& p);

}  // namespace dtnn
