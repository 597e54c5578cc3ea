// parallel_for and parallel_chunks: every index once, and an exception thrown by a body on any
// thread reaches the caller after the loop instead of ending the process at the region's edge.
#include <doctest/doctest.h>
#include <omp.h>

#include <atomic>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/parallel.hpp"
#include "test_support.hpp"

using namespace dtnn;

TEST_CASE("parallel_for visits every index once, on every thread count") {
  for (const std::int64_t n : {0, 1, 2, 3, 1000, 4099}) {
    CAPTURE(n);
    std::vector<std::atomic<int>> seen(static_cast<std::size_t>(n));
    parallel_for(n, 1, [&](std::int64_t i) { ++seen[static_cast<std::size_t>(i)]; });
    for (const auto& s : seen) CHECK(s.load() == 1);
    std::vector<std::atomic<int>> chunked(static_cast<std::size_t>(n));
    parallel_chunks(n, 1, [&](std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) ++chunked[static_cast<std::size_t>(i)];
    });
    for (const auto& s : chunked) CHECK(s.load() == 1);
  }
}

TEST_CASE("an exception in a parallel loop's body reaches the caller") {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);  // a team of two even on one core: the throw is on a worker's share
  std::atomic<int> ran{0};
  CHECK(test::error_of([&] {
          parallel_for(1000, 1, [&](std::int64_t i) {
            if (i == 700) throw Error("sample 700 is corrupt");
            ++ran;
          });
        }) == "sample 700 is corrupt");
  CHECK(ran.load() >= 500);  // the other thread's share ran to its end
  CHECK(test::error_of([&] {
          parallel_chunks(100000, 1, [&](std::int64_t begin, std::int64_t) {
            if (begin == 8192) throw Error("chunk at 8192");
          });
        }) == "chunk at 8192");
  omp_set_num_threads(threads);
}
