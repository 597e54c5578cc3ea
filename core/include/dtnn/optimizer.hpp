// Optimizer: updates parameters from their gradients and owns its per-parameter state.
#pragma once
#include <span>

#include "dtnn/core_export.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/plugin.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Optimizer : public Plugin {
 public:
  ~Optimizer() override;
  // Called once with every parameter of the model, in a fixed order; allocates the state.
  virtual void build(std::span<const Parameter> parameters) = 0;
  // One update of every parameter from its grad (the grads are already averaged over the batch),
  // leaving every grad ZEROED, ready for the next batch's accumulation: zeroing while the grad is
  // in cache saves the trainer a separate pass over all gradients.
  virtual void step(std::span<const Parameter> parameters) = 0;
  virtual double learning_rate() const = 0;
  virtual void set_learning_rate(double lr) = 0;
  // State tensors in a fixed order, for checkpoints (moments, velocities, step counters).
  virtual std::vector<Tensor> state() { return {}; }
};

}  // namespace dtnn
