// parallel_for: an OpenMP loop that stays serial when the work is too small to share.
//
// An exception thrown by a body inside an OpenMP region would reach the region's edge and end the
// process (std::terminate). These loops catch it on the thread that threw, let the other threads
// finish their share, and rethrow the first one after the region, on the calling thread: a
// corrupt image met while a batch decodes in parallel is an error naming it, not an abort.
#pragma once
#include <omp.h>

#include <cstdint>
#include <exception>
#include <mutex>

namespace dtnn {

// Below this many elements of cheap element-wise work a loop runs on one thread.
inline constexpr std::int64_t kParallelGrain = 32768;

namespace detail {

// The first exception of a parallel region's threads, rethrown after it.
class FirstException {
 public:
  template <class F>
  void run(F&& f) noexcept {
    try {
      f();
    } catch (...) {
      const std::lock_guard lock(mutex_);
      if (!first_) first_ = std::current_exception();
    }
  }
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
};

// Thread t's share of [0, n) out of `threads`: OpenMP's schedule(static), contiguous, sizes
// differing by one at most.
inline void static_share(std::int64_t n, int t, int threads, std::int64_t& begin,
                         std::int64_t& end) {
  const std::int64_t base = n / threads, extra = n % threads;
  begin = t * base + (t < extra ? t : extra);
  end = begin + base + (t < extra ? 1 : 0);
}

// share(begin, end) on each thread of a parallel region, over its static share of [0, n); the
// first exception of any share is rethrown after the region.
template <class F>
void parallel_shares(std::int64_t n, F&& share) {
  FirstException error;
#pragma omp parallel
  {
    std::int64_t begin, end;
    static_share(n, omp_get_thread_num(), omp_get_num_threads(), begin, end);
    error.run([&] { share(begin, end); });
  }
  error.rethrow();
}

}  // namespace detail

template <class F>
void parallel_for(std::int64_t n, std::int64_t grain, F&& body) {
  if (n < grain || n < 2) {
    for (std::int64_t i = 0; i < n; ++i) body(i);
    return;
  }
  detail::parallel_shares(n, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) body(i);
  });
}

// body(begin, end) over [0, n) in chunks, in parallel when n >= grain. A body that copies its
// pointers into __restrict locals lets the compiler vectorise the chunk.
template <class F>
void parallel_chunks(std::int64_t n, std::int64_t grain, F&& body) {
  constexpr std::int64_t kChunk = 4096;
  const std::int64_t chunks = (n + kChunk - 1) / kChunk;
  auto chunk = [&](std::int64_t c) {
    body(c * kChunk, c * kChunk + kChunk < n ? c * kChunk + kChunk : n);
  };
  if (n < grain || chunks < 2) {
    for (std::int64_t c = 0; c < chunks; ++c) chunk(c);
    return;
  }
  detail::parallel_shares(chunks, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) chunk(c);
  });
}

}  // namespace dtnn
