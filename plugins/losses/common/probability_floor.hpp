// The smallest probability a loss takes the log of (PyDTNN's --loss-eps, the losses' "eps"):
// a probability below it counts as it, so that neither the loss nor its gradient is infinite.
// "eps": 0 (the default) is 1e-7 in float32 and 1e-15 in float64: small enough not to bias a
// well-trained model, large enough that 1 - eps is not 1 in the dtype.
#pragma once
#include <type_traits>

#include "dtnn/params.hpp"

namespace dtnn::losses {

class ProbabilityFloor {
 public:
  explicit ProbabilityFloor(const Params& p) : eps_(p.get_double("eps")) {
    if (!(eps_ >= 0 && eps_ < 0.5)) p.fail("eps", "a number in [0, 0.5): 0 for the dtype's own");
  }
  template <class T>
  T get() const {
    if (eps_ > 0) return T(eps_);
    return std::is_same_v<T, float> ? T(1e-7) : T(1e-15);
  }

 private:
  double eps_;
};

}  // namespace dtnn::losses
