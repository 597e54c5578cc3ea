// BLIS kernel selection: on a CPU with AVX2+FMA or AVX-512, dtnn must not leave BLIS on its slow
// 'generic' kernels (BLIS 0.9 picks them on CPUs it does not know; dtnn then selects and verifies
// a better set, see runtime.hpp). Unless the user chose with BLIS_ARCH_TYPE.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

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
