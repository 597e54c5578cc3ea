#include "dtnn/precision.hpp"

#include <algorithm>
#include <cmath>

#include "dtnn/parallel.hpp"
#include "round_kernels.hpp"

namespace dtnn {

namespace {
const isa::Family<RoundKernels> kRound("core/round",
                                       {
                                           {isa::Level::portable, &detail::portable::round_kernels},
#ifdef DTNN_HAVE_ISA_avx2
                                           {isa::Level::avx2, &detail::avx2::round_kernels},
#endif
#ifdef DTNN_HAVE_ISA_avx512
                                           {isa::Level::avx512, &detail::avx512::round_kernels},
#endif
                                       });

constexpr std::int64_t kRoundChunk = 1 << 15;

// kernel(begin, count) over [0, count) in chunks, on the threads.
template <class Kernel>
void in_chunks(std::int64_t count, const Kernel& kernel) {
  parallel_for((count + kRoundChunk - 1) / kRoundChunk, 2, [&](std::int64_t chunk) {
    const std::int64_t begin = chunk * kRoundChunk;
    kernel(begin, std::min(kRoundChunk, count - begin));
  });
}

}  // namespace

const isa::Family<RoundKernels>& round_kernels() { return kRound; }

const char* to_string(Precision p) {
  switch (p) {
    case Precision::bf16:
      return "bf16";
    case Precision::fp16:
      return "fp16";
    case Precision::fp32:
      break;
  }
  return "fp32";
}

std::optional<Precision> parse_precision(std::string_view name) {
  if (name == "fp32" || name == "float32") return Precision::fp32;
  if (name == "bf16" || name == "bfloat16") return Precision::bf16;
  if (name == "fp16" || name == "float16") return Precision::fp16;
  return std::nullopt;
}

double unit_roundoff(Precision p) {
  switch (p) {
    case Precision::bf16:
      return std::ldexp(1.0, -8);
    case Precision::fp16:
      return std::ldexp(1.0, -11);
    case Precision::fp32:
      break;
  }
  return std::ldexp(1.0, -24);
}

float round_to(Precision p, float x) {
  switch (p) {
    case Precision::bf16:
      return from_bf16(to_bf16(x));
    case Precision::fp16:
      return from_fp16(to_fp16(x));
    case Precision::fp32:
      break;
  }
  return x;
}

double round_to(Precision p, double x) {
  return static_cast<double>(round_to(p, static_cast<float>(x)));
}

void round_to(Precision p, const float* src, float* dst, std::int64_t count) {
  if (p == Precision::fp32) {
    if (dst != src) std::copy_n(src, count, dst);
    return;
  }
  const RoundKernels& kernels = kRound.best();
  const auto kernel = p == Precision::bf16 ? kernels.bf16 : kernels.fp16;
  in_chunks(count, [&](std::int64_t at, std::int64_t n) { kernel(src + at, dst + at, n); });
}

void pack_bf16(const float* src, std::uint16_t* dst, std::int64_t count) {
  const auto kernel = kRound.best().pack_bf16;
  in_chunks(count, [&](std::int64_t at, std::int64_t n) { kernel(src + at, dst + at, n); });
}

void unpack_bf16(const std::uint16_t* src, float* dst, std::int64_t count) {
  const auto kernel = kRound.best().unpack_bf16;
  in_chunks(count, [&](std::int64_t at, std::int64_t n) { kernel(src + at, dst + at, n); });
}

void round_to(Precision p, const double* src, double* dst, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = round_to(p, src[i]);
}

}  // namespace dtnn
