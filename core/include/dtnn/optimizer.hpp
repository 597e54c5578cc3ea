// Optimizer: updates parameters from their gradients and owns its per-parameter state.
#pragma once
#include <span>

#include "dtnn/core_export.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin.hpp"

namespace dtnn {

// The formulas an optimizer follows (its `rule` parameter): "textbook", as PyTorch implements them
// (the default), or "pydtnn", PyDTNN's, which differ in where weight decay and epsilon enter and in
// their defaults. Each plugin's header gives both.
enum class UpdateRule { textbook, pydtnn };
DTNN_CORE_EXPORT UpdateRule parse_update_rule(const Params& p);
// One zero tensor per parameter, of its shape and dtype: the usual optimizer state.
DTNN_CORE_EXPORT std::vector<Tensor> zeros_like(std::span<const Parameter> parameters);
// p[key] as a number, or the rule's default when p[key] is null.
DTNN_CORE_EXPORT double number_or_rule_default(const Params& p, std::string_view key,
                                               UpdateRule rule, double textbook, double pydtnn);

class DTNN_CORE_EXPORT Optimizer : public Plugin {
 public:
  ~Optimizer() override;
  // Called once with every parameter of the model, in a fixed order; allocates the state.
  virtual void build(std::span<const Parameter> parameters) = 0;
  // One update of every parameter from its grad (the grads are already averaged over the batch):
  // begin_step(), then update(i, parameters[i]) for every i.
  void step(std::span<const Parameter> parameters);
  // Advances the per-step state (Adam's step count); the updates of that step follow.
  virtual void begin_step() {}
  // Updates parameter `index` (its position in build's list) and ZEROES its grad, ready for the
  // next batch's accumulation. The updates of one step may come in any order: the trainer updates
  // a layer's parameters as soon as backward has produced their gradients, while they and the
  // weights are still in cache.
  virtual void update(std::size_t index, const Parameter& parameter) = 0;
  virtual double learning_rate() const = 0;
  virtual void set_learning_rate(double lr) = 0;
  // State tensors in a fixed order, for checkpoints (moments, velocities, step counters).
  virtual std::vector<Tensor> state() { return {}; }
};

}  // namespace dtnn
