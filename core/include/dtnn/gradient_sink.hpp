// Where a training step's gradients go, chosen once per run by the trainer. A sink is told of each
// layer's parameters as backward finishes them (a GradientListener) and finishes the step:
//   UpdateWhenReady      one process: each layer's parameters are updated as soon as backward has
//                        produced their gradients, while they and the weights are in cache (the
//                        fast choice; with checking, nothing is updated from the first non-finite
//                        gradient on)
//   UpdateAfterBackward  one process, all or nothing: the update after backward, only when every
//                        gradient is finite (training.on_nonfinite "skip_batch", loss scaling),
//                        of the gradients times begin's weight (loss scaling's 1 / scale)
//   ExchangeThenUpdate   several ranks: buckets of gradients are summed over the ranks while
//                        backward runs, and updated as each arrives (dtnn/gradient_exchange.hpp)
// The optimizer leaves every gradient zero; a step's gradients therefore start at zero.
#pragma once
#include <memory>
#include <span>

#include "dtnn/core_export.hpp"
#include "dtnn/layer_chain.hpp"
#include "dtnn/nonfinite.hpp"

namespace dtnn {

class GradientExchange;
class Optimizer;
struct Parameter;

class DTNN_CORE_EXPORT GradientSink : public GradientListener {
 public:
  virtual ~GradientSink() = default;
  // Before backward: this rank's weight in the average over ranks, and whether its loss was
  // finite (a one-process sink updates nothing when it was not; backward does not run then).
  virtual void begin(double weight, bool loss_finite) = 0;
  // A rank with no samples this step, under data parallelism: it takes part with nothing.
  virtual void contribute_nothing() {}
  // After backward: false when a gradient (or, with several ranks, a sum) was not finite; the
  // parameters are then as the policy leaves them.
  virtual bool finish() = 0;
};

// The one-process sink for policy: UpdateAfterBackward for skip_batch, else UpdateWhenReady
// (checking gradients for stop).
DTNN_CORE_EXPORT std::unique_ptr<GradientSink> local_gradient_sink(
    Optimizer& optimizer, std::span<const Parameter> parameters, NonFinitePolicy policy);
// The several-ranks sink: exchange, then update (policy as GradientExchange::finish applies it;
// a rank whose loss is not finite sends NaN, so every rank decides alike).
DTNN_CORE_EXPORT std::unique_ptr<GradientSink> exchange_gradient_sink(GradientExchange& exchange,
                                                                      Optimizer& optimizer,
                                                                      NonFinitePolicy policy,
                                                                      bool host_memory);

}  // namespace dtnn
