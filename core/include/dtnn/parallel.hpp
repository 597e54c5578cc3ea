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

// body(begin, end) over [0, n) in chunks, in parallel when n >= grain. A body that copies its
// pointers into __restrict locals lets the compiler vectorise the chunk.
template <class F>
void parallel_chunks(std::int64_t n, std::int64_t grain, F&& body) {
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for schedule(static) if (n >= grain)
  for (std::int64_t c = 0; c < chunks; ++c)
    body(c * kChunk, c * kChunk + kChunk < n ? c * kChunk + kChunk : n);
}

}  // namespace dtnn
