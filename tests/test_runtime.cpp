// BLIS kernel selection: on a CPU with AVX2+FMA or AVX-512, dtnn must not leave BLIS on its slow
// 'generic' kernels (BLIS 0.9 picks them on CPUs it does not know; dtnn then selects and verifies
// a better set, see runtime.hpp). Unless the user chose with BLIS_ARCH_TYPE.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "dtnn/runtime.hpp"

TEST_CASE("BLIS runs a kernel set the CPU supports, not 'generic'") {
  dtnn::initialize_runtime();
  const dtnn::RuntimeInfo& rt = dtnn::runtime_info();
  MESSAGE("BLIS " << rt.blis_version << " kernels '" << rt.blis_kernels
                  << "': " << rt.blis_selection);
  CHECK(!rt.blis_version.empty());
  CHECK(!rt.blis_selection.empty());
  __builtin_cpu_init();
  const bool vector_cpu = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (vector_cpu && !std::getenv("BLIS_ARCH_TYPE")) CHECK(rt.blis_kernels != "generic");
  CHECK(rt.threads >= 1);
}

TEST_CASE("process_age_seconds counts from the process's start") {
  const double before = dtnn::process_age_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double after = dtnn::process_age_seconds();
  CHECK(before >= 0);
  CHECK(after - before >= 0.2);  // /proc counts in clock ticks (10 ms)
  CHECK(after - before <= 30);
}
