// What the CPU plugins sgd and adam and their CUDA twins (cuda_sgd, cuda_adam) share: the
// hyperparameters, read and checked once (errors name the key and what was expected), and the
// state each keeps (velocities; moments and step count), built and checkpointed alike. A plugin
// derives from SgdBase or AdamBase and only runs the update (dtnn/update_rules.hpp) where its
// tensors live.
#pragma once
#include <cmath>
#include <span>
#include <vector>

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
};
DTNN_CORE_EXPORT AdamSettings parse_adam_settings(const Params& p);

// sgd's state: a velocity per parameter (an empty tensor each when momentum is 0).
class SgdBase : public Optimizer {
 public:
  explicit SgdBase(const Params& p) : s_(parse_sgd_settings(p)) {}
  void build(std::span<const Parameter> params) override {
    velocity_ = s_.momentum > 0 ? zeros_like(params) : std::vector<Tensor>(params.size());
  }
  double learning_rate() const override { return s_.lr; }
  void set_learning_rate(double lr) override { s_.lr = lr; }
  std::vector<Tensor> state() override {
    return s_.momentum > 0 ? velocity_ : std::vector<Tensor>{};
  }

 protected:
  SgdSettings s_;
  std::vector<Tensor> velocity_;
};

// adam's state: the moments m and v per parameter and the step count t (a host float64 [1]
// tensor, so checkpoints carry it), with this step's bias corrections c1 = 1 - beta1^t and
// c2 = 1 - beta2^t.
class AdamBase : public Optimizer {
 public:
  explicit AdamBase(const Params& p) : s_(parse_adam_settings(p)) {}
  void build(std::span<const Parameter> params) override {
    m_ = zeros_like(params);
    v_ = zeros_like(params);
    step_ = Tensor::zeros(Shape{1}, DType::float64);
  }
  double learning_rate() const override { return s_.lr; }
  void set_learning_rate(double lr) override { s_.lr = lr; }
  std::vector<Tensor> state() override {
    std::vector<Tensor> s{step_};
    s.insert(s.end(), m_.begin(), m_.end());
    s.insert(s.end(), v_.begin(), v_.end());
    return s;
  }
  void begin_step() override {
    const double t = ++step_.data<double>()[0];
    c1_ = 1.0 - std::pow(s_.beta1, t);
    c2_ = 1.0 - std::pow(s_.beta2, t);
  }

 protected:
  AdamSettings s_;
  std::vector<Tensor> m_, v_;
  Tensor step_;
  double c1_ = 1, c2_ = 1;
};

}  // namespace dtnn
