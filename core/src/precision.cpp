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
  constexpr std::int64_t kChunk = 1 << 15;
  parallel_for((count + kChunk - 1) / kChunk, 2, [&](std::int64_t chunk) {
    const std::int64_t begin = chunk * kChunk;
    kernel(src + begin, dst + begin, std::min(kChunk, count - begin));
  });
}

void round_to(Precision p, const double* src, double* dst, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) dst[i] = round_to(p, src[i]);
}

}  // namespace dtnn
