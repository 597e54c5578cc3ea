// parallel_for: an OpenMP loop that stays serial when the work is too small to share.
#pragma once
#include <cstdint>

namespace dtnn {

// Below this many elements of cheap element-wise work a loop runs on one thread.
inline constexpr std::int64_t kParallelGrain = 32768;

template <class F>
void parallel_for(std::int64_t n, std::int64_t grain, F&& body) {
#pragma omp parallel for schedule(static) if (n >= grain)
  for (std::int64_t i = 0; i < n; ++i) body(i);
}

}  // namespace dtnn
