#include "dtnn/peak.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

#include "dtnn/runtime.hpp"

namespace dtnn {

namespace detail {
namespace portable {
const PeakKernels& peak_kernels();
}
namespace avx2 {
const PeakKernels& peak_kernels();
}
namespace avx512 {
const PeakKernels& peak_kernels();
}
}  // namespace detail

namespace {

const isa::Family<PeakKernels> kPeak("core/fp32_peak",
                                     {
                                         {isa::Level::portable, &detail::portable::peak_kernels},
#ifdef DTNN_HAVE_ISA_avx2
                                         {isa::Level::avx2, &detail::avx2::peak_kernels},
#endif
#ifdef DTNN_HAVE_ISA_avx512
                                         {isa::Level::avx512, &detail::avx512::peak_kernels},
#endif
                                     });

double nominal_ghz() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("cpu MHz", 0) == 0) {
      try {
        return std::stod(line.substr(line.find(':') + 1)) / 1000.0;
      } catch (const std::exception&) {
        return 0;
      }
    }
  return 0;
}

}  // namespace

const isa::Family<PeakKernels>& peak_kernels() { return kPeak; }

Fp32Peak measure_fp32_peak(int threads) {
  using Clock = std::chrono::steady_clock;
  const PeakKernels& k = kPeak.best();
  Fp32Peak peak;
  peak.level = kPeak.best_level();
  peak.lanes = k.lanes;
  peak.fused = k.fused;
  peak.threads = threads > 0 ? threads : runtime_info().threads;
  peak.nominal_ghz = nominal_ghz();
  double best_rate = 0, total = 0;
  float sink = 0;
#pragma omp parallel num_threads(peak.threads) reduction(+ : total, sink) reduction(max : best_rate)
  {
    // The chains' length grows until one run takes about 20 ms, so that a slow CPU (or an
    // emulated one) measures for as long as a fast one; then the best of five such runs.
    long iterations = 4096;
    double rate = 0;
    for (int measured = 0; measured < 5;) {
      const auto start = Clock::now();
      sink += k.fma_chains(iterations);
      const double s = std::chrono::duration<double>(Clock::now() - start).count();
      if (s < 0.015) {
        iterations = s > 0 ? std::min(iterations * 64, static_cast<long>(iterations * 0.02 / s) + 1)
                           : iterations * 64;
        continue;
      }
      rate = std::max(rate, static_cast<double>(iterations) * k.chains / s);
      ++measured;
    }
    total += rate;
    best_rate = std::max(best_rate, rate);
  }
  volatile float used = sink;  // the chains' results are used: nothing is optimised away
  (void)used;
  peak.fmas_per_second = best_rate;
  peak.gflops = total * k.lanes * 2 * 1e-9;
  return peak;
}

}  // namespace dtnn
