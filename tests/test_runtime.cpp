// BLIS kernel selection: on a CPU with AVX2+FMA or AVX-512, dtnn must not leave BLIS on its slow
// 'generic' kernels (BLIS 0.9 picks them on CPUs it does not know; dtnn then selects and verifies
// a better set, see runtime.hpp), nor on half the vector width the CPU has, nor above the ISA
// ceiling. Unless the user chose with BLIS_ARCH_TYPE.
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
  if (vector_cpu && !std::getenv("BLIS_ARCH_TYPE")) {
    CHECK(rt.blis_kernels != "generic");
    // What runs is what dtnn's rules ask at this ceiling (unless this BLIS build could not run
    // their choice), and the rules keep it.
    if (rt.blis_selection.find("could not run") == std::string::npos) {
      CHECK_MESSAGE(dtnn::blis_kernels_at(dtnn::isa::ceiling()) == rt.blis_kernels,
                    rt.blis_selection);
      CHECK_MESSAGE(dtnn::blis_kernels_to_request(rt.blis_kernels, dtnn::isa::ceiling(),
                                                  __builtin_cpu_is("amd"))
                        .set.empty(),
                    rt.blis_selection);
    }
  }
  CHECK(rt.threads >= 1);
}

TEST_CASE("the BLIS kernel set dtnn asks for: the widest the CPU runs, never above the ceiling") {
  using dtnn::isa::Level;
  auto wants = [](const char* own, Level ceiling, bool amd) {
    return dtnn::blis_kernels_to_request(own, ceiling, amd).set;
  };
  // 'generic' (a CPU BLIS does not know) gives way to the best set at the ceiling.
  CHECK(wants("generic", Level::avx512, true) == "skx");
  CHECK(wants("generic", Level::avx512, false) == "skx");
  CHECK(wants("generic", Level::avx2, true) == "zen3");
  CHECK(wants("generic", Level::avx2, false) == "haswell");
  CHECK(wants("generic", Level::portable, false) == "penryn");
  // Intel's AVX2 set on an AVX-512 CPU (Sapphire Rapids): skx; under an avx2 ceiling it stays.
  CHECK(wants("haswell", Level::avx512, false) == "skx");
  CHECK(wants("haswell", Level::avx2, false).empty());
  // A set above the ceiling (DTNN_ISA=avx2 on an AVX-512 CPU) gives way.
  CHECK(wants("skx", Level::avx2, false) == "haswell");
  CHECK(wants("skx", Level::avx2, true) == "zen3");
  CHECK(wants("zen3", Level::portable, true) == "penryn");
  CHECK(wants("sandybridge", Level::portable, false) == "penryn");
  // BLIS's own fitting choices stay: skx at avx512, AMD's zen sets (as fast as skx on Zen 5).
  CHECK(wants("skx", Level::avx512, false).empty());
  CHECK(wants("zen3", Level::avx512, true).empty());
  CHECK(wants("zen2", Level::avx2, true).empty());
  CHECK(wants("penryn", Level::portable, false).empty());
  // Every request is a fixed point: asked again, the rules keep it.
  for (const char* own : {"generic", "haswell", "skx", "zen3", "sandybridge", "penryn"})
    for (Level ceiling : {Level::portable, Level::avx2, Level::avx512})
      for (bool amd : {false, true}) {
        const std::string set = wants(own, ceiling, amd);
        if (!set.empty())
          CHECK_MESSAGE(wants(set.c_str(), ceiling, amd).empty(), own << " -> " << set);
      }
}

TEST_CASE("process_age_seconds counts from the process's start") {
  const double before = dtnn::process_age_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double after = dtnn::process_age_seconds();
  CHECK(before >= 0);
  CHECK(after - before >= 0.2);  // /proc counts in clock ticks (10 ms)
  CHECK(after - before <= 30);
}
