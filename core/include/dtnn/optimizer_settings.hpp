// What the CPU optimizer plugins and their CUDA twins (cuda_sgd, cuda_adam, ...) share: the
// hyperparameters, read and checked once (errors name the key and what was expected), and the
// state each keeps (velocities; moments and step count), built and checkpointed alike. A plugin
// derives from SgdBase, AdamBase, RmsPropBase or NadamBase and only runs the update (dtnn/update_rules.hpp) where its
// tensors live.
#pragma once
#include <cmath>
#include <span>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/optimizer.hpp"

namespace dtnn {

// Each optimizer's parameters with their defaults, as its plugins (CPU and CUDA) declare them.
inline constexpr const char* kSgdParameters =
    R"({"rule": "textbook", "learning_rate": 0.01, "momentum": null, "nesterov": false,
        "decay": 0.0})";
inline constexpr const char* kAdamParameters =
    R"({"rule": "textbook", "learning_rate": null, "beta1": null, "beta2": 0.999,
        "epsilon": null, "decay": 0.0})";
inline constexpr const char* kRmsPropParameters =
    R"({"rule": "textbook", "learning_rate": 0.01, "rho": null, "epsilon": null, "decay": 0.0})";
inline constexpr const char* kNadamParameters =
    R"({"rule": "textbook", "learning_rate": null, "beta1": null, "beta2": 0.999,
        "epsilon": null, "decay": 0.0, "momentum_decay": 0.004})";

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

struct RmsPropSettings {
  UpdateRule rule = UpdateRule::textbook;
  double lr = 0.01, rho = 0.99, epsilon = 1e-8, decay = 0;
};
DTNN_CORE_EXPORT RmsPropSettings parse_rmsprop_settings(const Params& p);

// nadam: adam's hyperparameters (learning rate 0.002 under rule textbook) and momentum_decay.
struct NadamSettings : AdamSettings {
  double momentum_decay = 0.004;
};
DTNN_CORE_EXPORT NadamSettings parse_nadam_settings(const Params& p);

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

// rmsprop's state: the running mean square per parameter.
class RmsPropBase : public Optimizer {
 public:
  explicit RmsPropBase(const Params& p) : s_(parse_rmsprop_settings(p)) {}
  void build(std::span<const Parameter> params) override { square_ = zeros_like(params); }
  double learning_rate() const override { return s_.lr; }
  void set_learning_rate(double lr) override { s_.lr = lr; }
  std::vector<Tensor> state() override { return square_; }

 protected:
  RmsPropSettings s_;
  std::vector<Tensor> square_;
};

// nadam's state: the moments m and v per parameter, and the step count t with the momentum
// product P_t (a host float64 [2] tensor, so checkpoints carry them). begin_step computes the
// step's coefficients of rules::Nadam / rules::PydtnnNadam.
class NadamBase : public Optimizer {
 public:
  explicit NadamBase(const Params& p) : s_(parse_nadam_settings(p)) {}
  void build(std::span<const Parameter> params) override {
    m_ = zeros_like(params);
    v_ = zeros_like(params);
    counters_ = Tensor::zeros(Shape{2}, DType::float64);  // t, and P_t (1 before any step)
    counters_.data<double>()[1] = 1.0;
  }
  double learning_rate() const override { return s_.lr; }
  void set_learning_rate(double lr) override { s_.lr = lr; }
  std::vector<Tensor> state() override {
    std::vector<Tensor> s{counters_};
    s.insert(s.end(), m_.begin(), m_.end());
    s.insert(s.end(), v_.begin(), v_.end());
    return s;
  }
  void begin_step() override {
    double* c = counters_.data<double>();
    const double t = ++c[0];
    inv_c2_ = 1.0 / (1.0 - std::pow(s_.beta2, t));
    if (s_.rule == UpdateRule::pydtnn) {
      inv_c1_ = 1.0 / (1.0 - std::pow(s_.beta1, t));
      return;
    }
    const double mu = s_.beta1 * (1.0 - 0.5 * std::pow(0.96, t * s_.momentum_decay));
    const double mu_next = s_.beta1 * (1.0 - 0.5 * std::pow(0.96, (t + 1) * s_.momentum_decay));
    c[1] *= mu;
    grad_coef_ = s_.lr * (1.0 - mu) / (1.0 - c[1]);
    moment_coef_ = s_.lr * mu_next / (1.0 - c[1] * mu_next);
  }

 protected:
  NadamSettings s_;
  std::vector<Tensor> m_, v_;
  Tensor counters_;
  double inv_c1_ = 1, inv_c2_ = 1, grad_coef_ = 0, moment_coef_ = 0;  // of the current step
};

}  // namespace dtnn
