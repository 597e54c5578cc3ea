// The machine's FP32 peak, measured: every thread runs independent chains of multiply-adds on
// the widest vectors of the best instruction-set level this process runs (peak_kernels.cpp, one
// variant per level), the way a GEMM micro-kernel keeps the FMA units busy. It is the yardstick
// `dtnn info` prints and bench/conv_bench divides each layer's GFLOPS by.
//   peak = threads x vector lanes x 2 flops x vector FMAs per second (per thread)
// The clock and the number of FMA units are not read from a table: their product is what the
// chains achieve; `nominal_ghz` (the kernel's "cpu MHz") turns it into FMAs per cycle, a
// lower bound of the FMA units when the core boosts above its nominal clock.
#pragma once
#include "dtnn/core_export.hpp"
#include "dtnn/isa.hpp"

namespace dtnn {

struct Fp32Peak {
  isa::Level level = isa::Level::portable;  // the chains' instruction set
  int lanes = 0;                            // floats per vector
  bool fused = false;                       // FMA instructions (otherwise a multiply and an add)
  int threads = 0;
  double fmas_per_second = 0;  // vector multiply-adds per second, per thread (the best thread)
  double gflops = 0;           // all threads together
  double nominal_ghz = 0;      // /proc/cpuinfo's "cpu MHz", 0 when unknown
  // Vector FMAs per nominal cycle of one thread (0 when the clock is unknown).
  double fmas_per_cycle() const {
    return nominal_ghz > 0 ? fmas_per_second / (nominal_ghz * 1e9) : 0;
  }
};

// Runs the chains on `threads` threads (0: the runtime's), each run made about 20 ms long; the best
// of five per thread, summed.
DTNN_CORE_EXPORT Fp32Peak measure_fp32_peak(int threads = 0);

// The chains, one variant per level (a family like core/small_gemm): returns a value that depends
// on every chain, so that nothing is optimised away.
struct PeakKernels {
  float (*fma_chains)(long iterations);  // iterations x chains x lanes multiply-adds
  int lanes;
  int chains;
  bool fused;
  // (Last, so that the fields before keep their offsets.) The same chains on vectors half as wide
  // (32 bytes), where the level has wider ones (AVX-512; nullptr below): vector_width.hpp compares
  // the two rates.
  float (*half_width_chains)(long iterations);
};
DTNN_CORE_EXPORT const isa::Family<PeakKernels>& peak_kernels();

}  // namespace dtnn
