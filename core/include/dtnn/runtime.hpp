// Process-wide runtime set-up: BLIS kernel selection and thread counts.
//
// BLIS 0.9 does not know recent CPUs: it falls back to its slow 'generic' kernels on some (AMD Zen
// 5 family 26 model 2) and to its AVX2 'haswell' set on Intel CPUs with AVX-512 (Sapphire Rapids).
// Before the first BLIS call, initialize_runtime() asks BLIS (in a short-lived child process,
// because BLIS fixes its choice once per process) which kernels it would pick, and
// blis_kernels_to_request() says what dtnn asks for instead (through BLIS_ARCH_TYPE, after a child
// has checked that this BLIS build runs it): the widest set the CPU runs, never one above the ISA
// ceiling (DTNN_ISA). A BLIS_ARCH_TYPE already set by the user is respected.
#pragma once
#include <string>
#include <string_view>

#include "dtnn/core_export.hpp"
#include "dtnn/isa.hpp"

namespace dtnn {

struct RuntimeInfo {
  std::string blis_version;
  std::string blis_kernels;    // the kernel set BLIS runs with, e.g. "skx"
  std::string blis_selection;  // how it was chosen, in words
  std::string cpu;             // model name
  int threads = 1;             // OpenMP and BLIS threads
  std::string blis_detected;   // BLIS's own choice on this CPU (empty: not asked); last, so that
                               // the fields before keep their places for plugins built earlier
};

// A kernel set for BLIS to run instead of its own choice: `set` names it as bli_arch_string does
// ("skx", "haswell", "zen3", "penryn"), empty to keep BLIS's choice; `reason` says why.
struct BlisRequest {
  std::string set;
  std::string reason;
};
// own: BLIS's own choice; ceiling: the process's ISA ceiling; amd: the CPU is AMD's. The rules:
// a set above the ceiling, or 'generic', gives way to the best set at the ceiling (skx; zen3 on
// AMD or haswell at avx2; penryn at portable); 'haswell' on an AVX-512 ceiling gives way to skx.
DTNN_CORE_EXPORT BlisRequest blis_kernels_to_request(std::string_view own, isa::Level ceiling,
                                                     bool amd);
// The kernel set BLIS gets in a process of this CPU capped at `level` (DTNN_ISA), by those rules
// from its own choice (runtime_info().blis_detected); empty when BLIS was not asked (the user set
// BLIS_ARCH_TYPE, or the pre-check failed). Needs initialize_runtime().
DTNN_CORE_EXPORT std::string blis_kernels_at(isa::Level level);

// Idempotent; threads <= 0 means OMP_NUM_THREADS or every core.
DTNN_CORE_EXPORT void initialize_runtime(int threads = 0);
DTNN_CORE_EXPORT const RuntimeInfo& runtime_info();
DTNN_CORE_EXPORT void set_num_threads(int threads);
// Seconds since this process started (Linux: its start time in /proc against the uptime, so the
// dynamic loader's and the plugins' loading count; elsewhere since the core library was loaded).
DTNN_CORE_EXPORT double process_age_seconds();

}  // namespace dtnn
