// Steady-state training throughput: samples per second over the run's steps, the first
// kWarmupSteps excluded (their first-touch allocations, cache and tuning, best_of's rounds).
#pragma once
#include <cstdint>

namespace dtnn {

class SteadyThroughput {
 public:
  static constexpr std::int64_t kWarmupSteps = 5;

  // A step of `seconds` that trained `samples` on this rank; `steps_before`: the run's steps
  // before it (a resumed run's counted from where it resumed).
  void add(double seconds, std::int64_t samples, std::int64_t steps_before) {
    if (steps_before < kWarmupSteps) return;
    seconds_ += seconds;
    samples_ += samples;
  }
  double samples_per_second() const { return seconds_ > 0 ? double(samples_) / seconds_ : 0.0; }

 private:
  double seconds_ = 0;
  std::int64_t samples_ = 0;
};

}  // namespace dtnn
