#include "dtnn/vector_width.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "dtnn/communicator.hpp"
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

// The width in use, read on every small product: an atomic pointer, so that reading it costs a
// load. Every width set stays alive, since a caller may still hold a reference to an earlier one.
struct Current {
  std::mutex changing;
  std::vector<std::unique_ptr<const VectorWidth>> kept;
  std::atomic<const VectorWidth*> width{nullptr};

  const VectorWidth& use(VectorWidth w) {  // `changing` held
    kept.push_back(std::make_unique<const VectorWidth>(std::move(w)));
    width.store(kept.back().get(), std::memory_order_release);
    return *kept.back();
  }
};

Current& current() {
  static Current c;
  return c;
}

}  // namespace

const VectorWidth& avx512_vector_width() {
  Current& c = current();
  if (const VectorWidth* w = c.width.load(std::memory_order_acquire)) return *w;
  const std::lock_guard lock(c.changing);
  if (const VectorWidth* w = c.width.load(std::memory_order_acquire)) return *w;
  return c.use(decide());
}

void set_avx512_vector_width(const VectorWidth& width) {
  if (width.bytes != 32 && width.bytes != 64)
    throw Error("AVX-512 vector width of " + std::to_string(width.bytes) +
                " bytes: expected 32 or 64");
  Current& c = current();
  const std::lock_guard lock(c.changing);
  c.use(width);
}

void agree_avx512_vector_width(Communicator& comm) {
  if (comm.size() < 2) return;
  double bytes = comm.rank() == 0 ? avx512_vector_width().bytes : 0;
  comm.broadcast(&bytes, 1, DType::float64, 0, "AVX-512 vector width");
  if (comm.rank() == 0) return;
  if (bytes != 32 && bytes != 64)
    throw Error("rank 0 sent an AVX-512 vector width of " + std::to_string(std::lround(bytes)) +
                " bytes: expected 32 or 64");
  VectorWidth w;
  w.bytes = static_cast<int>(bytes);
  w.decided_by = "rank 0's, which every rank of the run takes";
  set_avx512_vector_width(w);
}

}  // namespace dtnn
