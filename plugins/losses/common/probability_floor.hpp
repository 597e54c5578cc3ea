// A loss's "eps" (PyDTNN's --loss-eps): the smallest probability it takes the log of, so that
// neither the loss nor its gradient is infinite. "eps": 0 (the default) is the dtype's own
// (rules::probability_floor: 1e-7 in float32, 1e-15 in float64), small enough not to bias a
// well-trained model, large enough that 1 - eps is not 1 in the dtype.
#pragma once
#include "dtnn/params.hpp"

namespace dtnn::losses {

inline double probability_floor(const Params& p) {
  const double eps = p.get_double("eps");
  if (!(eps >= 0 && eps < 0.5)) p.fail("eps", "a number in [0, 0.5): 0 for the dtype's own");
  return eps;
}

}  // namespace dtnn::losses
