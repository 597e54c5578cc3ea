// Independent multiply-add chains on the widest vector of this file's instruction-set level (see
// dtnn/peak.hpp). Compiled once per level (dtnn_add_isa_variants), inside namespace
// DTNN_ISA_VARIANT, calling nothing out of line.
#include "dtnn/peak.hpp"
#include "dtnn/simd.hpp"

namespace dtnn::detail::DTNN_ISA_VARIANT {

namespace {

#if defined(__AVX512F__)
constexpr int kBytes = 64;
#elif defined(__AVX__)
constexpr int kBytes = 32;
#else
constexpr int kBytes = 16;
#endif
constexpr int kLanes = kBytes / 4;
// Twelve chains in flight: FMA latency (4-5 cycles) times two FMA units, with room to spare.
constexpr int kChains = 12;
#if defined(__FMA__)
constexpr bool kFused = true;
#else
constexpr bool kFused = false;
#endif

template <int Bytes>
float chains_of(long iterations) {
  constexpr int lanes = Bytes / 4;
  using V = simd::Vec<float, Bytes>;
  V acc[kChains], a, b;
  for (int l = 0; l < lanes; ++l) {
    a[l] = 0.9999999f;
    b[l] = 1e-7f;
  }
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < lanes; ++l) acc[c][l] = static_cast<float>(c + l);
  for (long i = 0; i < iterations; ++i)
    for (int c = 0; c < kChains; ++c) acc[c] = acc[c] * a + b;
  float sum = 0;
  for (int c = 0; c < kChains; ++c)
    for (int l = 0; l < lanes; ++l) sum += acc[c][l];
  return sum;
}

float fma_chains(long iterations) { return chains_of<kBytes>(iterations); }

}  // namespace

const PeakKernels& peak_kernels() {
#if defined(__AVX512F__)
  static constexpr PeakKernels kernels{&fma_chains, kLanes, kChains, kFused, &chains_of<32>};
#else
  static constexpr PeakKernels kernels{&fma_chains, kLanes, kChains, kFused, nullptr};
#endif
  return kernels;
}

}  // namespace dtnn::detail::DTNN_ISA_VARIANT
