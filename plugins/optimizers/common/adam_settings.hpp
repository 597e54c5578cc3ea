// The hyperparameters adam and nadam share, read and checked once (errors name the key and what
// was expected), and the moments both keep.
#pragma once
#include <cmath>
#include <span>
#include <vector>

#include "dtnn/optimizer.hpp"

namespace dtnn::optimizers {

struct AdamSettings {
  UpdateRule rule = UpdateRule::textbook;
  double lr = 0.001, beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8, decay = 0;

  // textbook_lr: the learning rate's default under rule "textbook" (PyTorch's: 0.001 for Adam,
  // 0.002 for NAdam; PyDTNN's is 0.01 for both).
  AdamSettings(const Params& p, double textbook_lr)
      : rule(parse_update_rule(p)),
        lr(number_or_rule_default(p, "learning_rate", rule, textbook_lr, 0.01)),
        beta1(number_or_rule_default(p, "beta1", rule, 0.9, 0.99)),
        beta2(p.get_double("beta2")),
        epsilon(number_or_rule_default(p, "epsilon", rule, 1e-8, 1e-7)),
        decay(p.get_double("decay")) {
    if (lr < 0) p.fail("learning_rate", "a number >= 0");
    if (beta1 < 0 || beta1 >= 1) p.fail("beta1", "a number in [0, 1)");
    if (beta2 < 0 || beta2 >= 1) p.fail("beta2", "a number in [0, 1)");
    if (epsilon <= 0) p.fail("epsilon", "a number > 0");
    if (decay < 0) p.fail("decay", "a number >= 0");
  }
};

// The first and second moments m and v, one tensor per parameter each, after a host float64
// counters tensor (adam: the step t; nadam: t and the momentum product), so checkpoints carry them.
struct Moments {
  std::vector<Tensor> m, v;
  Tensor counters;

  void build(std::span<const Parameter> params, std::int64_t counter_count) {
    m = zeros_like(params);
    v = zeros_like(params);
    counters = Tensor::zeros(Shape{counter_count}, DType::float64);
  }
  std::vector<Tensor> state() const {
    std::vector<Tensor> s{counters};
    s.insert(s.end(), m.begin(), m.end());
    s.insert(s.end(), v.begin(), v.end());
    return s;
  }
};

}  // namespace dtnn::optimizers
