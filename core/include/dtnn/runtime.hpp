// Process-wide runtime set-up: BLIS kernel selection and thread counts.
//
// BLIS 0.9 does not know recent CPUs and falls back to its slow 'generic' kernels. Before the
// first BLIS call, initialize_runtime() asks BLIS (in a short-lived child process, because BLIS
// fixes its choice once per process) which kernels it would pick; when the answer is 'generic'
// and the CPU supports AVX-512 (or AVX2+FMA) it selects skx (or haswell) through BLIS_ARCH_TYPE.
// A BLIS_ARCH_TYPE already set by the user is respected.
#pragma once
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

struct RuntimeInfo {
  std::string blis_version;
  std::string blis_kernels;    // the kernel set BLIS runs with, e.g. "skx"
  std::string blis_selection;  // how it was chosen, in words
  std::string cpu;             // model name
  int threads = 1;             // OpenMP and BLIS threads
};

// Idempotent; threads <= 0 means OMP_NUM_THREADS or every core.
DTNN_CORE_EXPORT void initialize_runtime(int threads = 0);
DTNN_CORE_EXPORT const RuntimeInfo& runtime_info();
DTNN_CORE_EXPORT void set_num_threads(int threads);
// Seconds since this process started (Linux: its start time in /proc against the uptime, so the
// dynamic loader's and the plugins' loading count; elsewhere since the core library was loaded).
DTNN_CORE_EXPORT double process_age_seconds();

}  // namespace dtnn
