#include "dtnn/vector_width.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "dtnn/error.hpp"
#include "dtnn/isa.hpp"
#include "dtnn/peak.hpp"

namespace dtnn {

namespace {

// Vector multiply-adds a second of one run of `chains` (about 0.1-0.3 ms); decide() keeps the
// best of several, which an interrupt or another process on the core cannot lower.
double rate(float (*chains)(long), long iterations, int chain_count, float& sink) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  sink += chains(iterations);
  const double s = std::chrono::duration<double>(Clock::now() - start).count();
  return s > 0 ? double(iterations) * chain_count / s : 0;
}

VectorWidth decide() {
  VectorWidth w;
  if (const char* v = std::getenv("DTNN_VECTOR_BYTES"); v && *v) {
    const std::string_view value(v);
    if (value != "32" && value != "64")
      throw Error("DTNN_VECTOR_BYTES=" + std::string(value) +
                  ": expected 32 or 64 (the bytes of a vector in the AVX-512 kernels)");
    w.bytes = value == "64" ? 64 : 32;
    w.decided_by = "DTNN_VECTOR_BYTES";
    return w;
  }
  if (peak_kernels().best_level() != isa::Level::avx512) {
    w.decided_by = "not measured: this process does not run the avx512 level";
    return w;
  }
  const PeakKernels* k = &peak_kernels().best();  // avx512's: half_width_chains is set
  // Interleaved, the best of seven each: the first runs also bring the core to the clock the
  // 512-bit instructions run at.
  constexpr long kIterations = 50000;
  double wide = 0, narrow = 0;
  float sink = 0;
  for (int run = 0; run < 7; ++run) {
    wide = std::max(wide, rate(k->fma_chains, kIterations, k->chains, sink));
    narrow = std::max(narrow, rate(k->half_width_chains, kIterations, k->chains, sink));
  }
  volatile float used = sink;  // nothing optimised away
  (void)used;
  w.wide_rate = narrow > 0 ? wide / narrow : 0;
  w.bytes = w.wide_rate >= kWideFrom ? 64 : 32;
  char text[160];
  std::snprintf(text, sizeof text,
                "measured: 64-byte multiply-adds run %.2f times as many a second as 32-byte ones",
                w.wide_rate);
  w.decided_by = text;
  return w;
}

}  // namespace

const VectorWidth& avx512_vector_width() {
  static const VectorWidth width = decide();
  return width;
}

}  // namespace dtnn
