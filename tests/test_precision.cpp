// The low-precision formats (precision.hpp) and the GEMM in them (gemm.hpp): rounding bit for bit
// (fp16 against the compiler's _Float16 over a million float32 patterns and every half; bf16
// against rounding computed in double; ties, carries, overflow, subnormals, NaN), every level's
// bulk rounding, and every path of gemm(Precision, ...) against float64 sums of the rounded
// operands within its stated bound.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <ios>
#include <limits>
#include <vector>

#include "dtnn/gemm.hpp"
#include "dtnn/precision.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/runtime.hpp"

namespace {

float from_bits(std::uint32_t bits) { return std::bit_cast<float>(bits); }

std::uint16_t compiler_fp16(float f) {
  return std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
}

// bfloat16 by its definition: the nearer of the two neighbours in double, ties to the even one.
std::uint16_t reference_bf16(float f) {
  const auto x = std::bit_cast<std::uint32_t>(f);
  const auto below = static_cast<std::uint16_t>(x >> 16);
  if ((x & 0xffffu) == 0) return below;
  const auto above = static_cast<std::uint16_t>(below + 1);
  const double d = f, lo = dtnn::from_bf16(below), hi = dtnn::from_bf16(above);
  const double to_lo = std::abs(d - lo), to_hi = std::abs(hi - d);
  if (std::isinf(hi))
    return to_lo <= std::abs(d - std::ldexp(1.0, 128) * (d < 0 ? -1 : 1)) ? below : above;
  if (to_lo != to_hi) return to_lo < to_hi ? below : above;
  return (below & 1u) == 0 ? below : above;
}

}  // namespace

TEST_CASE("fp16 conversion is IEEE's, bit for bit, overflowing from 65520, subnormals kept") {
  using dtnn::from_fp16;
  using dtnn::to_fp16;
  int wrong = 0;
  for (std::uint64_t u = 0; u <= 0xffffffffull; u += 4093) {  // against the compiler's _Float16
    const float f = from_bits(static_cast<std::uint32_t>(u));
    if (std::isnan(f)) {
      CHECK(std::isnan(from_fp16(to_fp16(f))));
      continue;
    }
    if (to_fp16(f) != compiler_fp16(f) && ++wrong < 5)
      CHECK_MESSAGE(false, "float bits " << std::hex << u << ": " << to_fp16(f) << " vs "
                                         << compiler_fp16(f));
  }
  CHECK(wrong == 0);
  CHECK(to_fp16(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // a tie: to the even neighbour
  CHECK(to_fp16(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
  CHECK(to_fp16(65504.0f) == 0x7BFF);
  CHECK(to_fp16(65519.0f) == 0x7BFF);
  CHECK(to_fp16(65520.0f) == 0x7C00);  // the tie rounds to even: infinity
  CHECK(to_fp16(70000.0f) == 0x7c00);  // beyond: infinity, for the non-finite checks
  CHECK(to_fp16(-1e-9f) == 0x8000);
  CHECK(to_fp16(std::ldexp(1.0f, -24)) == 0x0001);  // the smallest subnormal
  CHECK(to_fp16(std::ldexp(1.0f, -25)) == 0x0000);  // half of it: tie to even, zero
  CHECK(to_fp16(std::ldexp(1.5f, -25)) == 0x0001);
  CHECK(to_fp16(std::ldexp(1023.5f, -24)) == 0x0400);  // rounds up into the smallest normal
  for (std::uint32_t h = 0; h < 0x10000; ++h) {        // every half survives the round trip
    const float f = from_fp16(static_cast<std::uint16_t>(h));
    if (std::isnan(f)) continue;
    REQUIRE(to_fp16(f) == h);
    REQUIRE(f == static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(h))));
  }
}

TEST_CASE("bf16 conversion rounds to nearest, ties to even, and keeps NaN and infinity") {
  using dtnn::from_bf16;
  using dtnn::to_bf16;
  for (std::uint64_t u = 0; u <= 0xffffffffull; u += 4093) {
    const float f = from_bits(static_cast<std::uint32_t>(u));
    if (std::isnan(f)) {
      CHECK(std::isnan(from_bf16(to_bf16(f))));
      continue;
    }
    if (std::isinf(f)) {
      CHECK(from_bf16(to_bf16(f)) == f);
      continue;
    }
    REQUIRE_MESSAGE(to_bf16(f) == reference_bf16(f), "float bits " << std::hex << u);
  }
  CHECK(to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);  // a tie: to the even neighbour
  CHECK(to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
  CHECK(to_bf16(from_bits(0x3F808001u)) == 0x3F81);               // just above the tie: up
  CHECK(to_bf16(from_bits(0x3FFFFFFFu)) == 0x4000);               // the carry steps the exponent
  CHECK(to_bf16(std::numeric_limits<float>::max()) == 0x7F80);    // past the largest bf16
  CHECK(std::isnan(from_bf16(to_bf16(from_bits(0x7F800001u)))));  // a NaN whose top bits say inf
  CHECK(to_bf16(from_bits(0x00010000u)) == 0x0001);               // subnormals kept
}

TEST_CASE("precision names and unit roundoffs") {
  CHECK(dtnn::parse_precision("bf16") == dtnn::Precision::bf16);
  CHECK(dtnn::parse_precision("float16") == dtnn::Precision::fp16);
  CHECK(!dtnn::parse_precision("fp8"));
  CHECK(std::string(dtnn::to_string(dtnn::Precision::fp16)) == "fp16");
  CHECK(dtnn::unit_roundoff(dtnn::Precision::bf16) == std::ldexp(1.0, -8));
  CHECK(dtnn::unit_roundoff(dtnn::Precision::fp16) == std::ldexp(1.0, -11));
}

namespace {

struct LowpCase {
  bool ta, tb;
  std::int64_t m, n, k;
  float alpha, beta;
};

// gemm(p, ...) (or `kernel` when given) against float64 sums of the operands rounded to p. The
// rounded operands' products are exact in float32, so what may differ is float32 accumulation:
// |err| <= (k + 2) 2^-24 (|alpha| |A||B| + |beta C|) elementwise. Returns the largest ratio of the
// error to that bound (<= 1 passes), and checks padding columns stay as they were.
double bound_ratio(dtnn::Precision p, const LowpCase& t,
                   decltype(dtnn::Bf16GemmKernels::f32) kernel = nullptr) {
  dtnn::Rng rng(static_cast<std::uint64_t>(t.m * 7 + t.n * 13 + t.k));
  const std::int64_t lda = t.ta ? t.m + 1 : t.k + 3, ldb = t.tb ? t.k + 2 : t.n + 5, ldc = t.n + 4;
  std::vector<float> a(static_cast<std::size_t>((t.ta ? t.k : t.m) * lda)),
      b(static_cast<std::size_t>((t.tb ? t.n : t.k) * ldb)), c(static_cast<std::size_t>(t.m * ldc));
  // Magnitudes over several binades, so rounding is not one fixed relative step.
  for (auto& v : a) v = static_cast<float>(rng.uniform(-1, 1) * std::exp2(rng.uniform(-4, 4)));
  for (auto& v : b) v = static_cast<float>(rng.uniform(-1, 1) * std::exp2(rng.uniform(-4, 4)));
  for (auto& v : c)
    v = t.beta == 0 ? std::numeric_limits<float>::quiet_NaN()  // never read
                    : static_cast<float>(rng.uniform(-1, 1));
  const std::vector<float> c0 = c;
  auto at_a = [&](std::int64_t i, std::int64_t kk) {
    return dtnn::round_to(p, t.ta ? a[static_cast<std::size_t>(kk * lda + i)]
                                  : a[static_cast<std::size_t>(i * lda + kk)]);
  };
  auto at_b = [&](std::int64_t kk, std::int64_t j) {
    return dtnn::round_to(p, t.tb ? b[static_cast<std::size_t>(j * ldb + kk)]
                                  : b[static_cast<std::size_t>(kk * ldb + j)]);
  };
  if (kernel)
    kernel(t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.data(), lda, b.data(), ldb, t.beta, c.data(), ldc,
           2);
  else
    dtnn::gemm(p, t.ta, t.tb, t.m, t.n, t.k, t.alpha, a.data(), lda, b.data(), ldb, t.beta,
               c.data(), ldc);
  double worst = 0;
  for (std::int64_t i = 0; i < t.m; ++i) {
    for (std::int64_t j = 0; j < t.n; ++j) {
      double exact = 0, magnitude = 0;
      for (std::int64_t kk = 0; kk < t.k; ++kk) {
        exact += double(at_a(i, kk)) * double(at_b(kk, j));
        magnitude += std::abs(double(at_a(i, kk)) * double(at_b(kk, j)));
      }
      const double old = t.beta == 0 ? 0.0 : double(c0[static_cast<std::size_t>(i * ldc + j)]);
      const double expected = t.alpha * exact + t.beta * old;
      const double bound = double(t.k + 2) * std::ldexp(1.0, -24) *
                               (std::abs(t.alpha) * magnitude + std::abs(t.beta * old)) +
                           1e-30;
      const double got = c[static_cast<std::size_t>(i * ldc + j)];
      worst = std::max(worst, std::isfinite(got) ? std::abs(got - expected) / bound : INFINITY);
    }
    for (std::int64_t j = t.n; j < ldc; ++j) {  // padding: untouched (NaN stays NaN)
      const float before = c0[static_cast<std::size_t>(i * ldc + j)],
                  after = c[static_cast<std::size_t>(i * ldc + j)];
      if (!(before == after || (std::isnan(before) && std::isnan(after)))) worst = INFINITY;
    }
  }
  return worst;
}

const LowpCase kLowpCases[] = {
    {false, false, 37, 45, 29, 1.0f, 0.0f},
    {false, false, 130, 70, 400, 1.0f, 1.0f},
    {true, false, 50, 33, 777, 1.0f, 1.0f},
    {false, true, 64, 100, 96, 0.5f, -2.0f},
    {true, true, 13, 17, 31, 1.0f, 0.0f},
    {false, false, 1, 1, 1, 1.0f, 0.0f},
    {false, false, 300, 3200, 40, 1.0f, 0.0f},
    {false, true, 200, 20, 1000, 2.0f, 0.5f},
    {true, false, 12, 32, 2, 1.0f, 0.0f},
    {false, false, 160, 35, 0, 1.0f, 0.5f},
    // A long reduction into few tiles: the kernel splits the reduction over its 2 threads.
    {true, false, 40, 24, 5000, 1.0f, 0.5f},
    {false, false, 30, 40, 4001, -1.0f, 0.0f}};

}  // namespace

TEST_CASE("gemm in bf16 and fp16 sums the rounded operands within float32's accumulation bound") {
  dtnn::initialize_runtime();
  for (dtnn::Precision p : {dtnn::Precision::bf16, dtnn::Precision::fp16})
    for (const LowpCase& t : kLowpCases) {
      CAPTURE(dtnn::to_string(p));
      CAPTURE(t.ta);
      CAPTURE(t.tb);
      CAPTURE(t.m);
      CAPTURE(t.n);
      CAPTURE(t.k);
      CHECK(bound_ratio(p, t) <= 1.0);
    }
}

TEST_CASE("the vdpbf16ps kernel, where the CPU has AVX512-BF16, within the same bound") {
  dtnn::initialize_runtime();
  auto kernel = dtnn::bf16_gemm_kernel();
  if (!kernel) {
    MESSAGE("skipped: this CPU (or DTNN_ISA) runs no AVX512-BF16: "
            << dtnn::lowp_gemm_path(dtnn::Precision::bf16));
    return;
  }
  for (const LowpCase& t : kLowpCases) {
    CAPTURE(t.ta);
    CAPTURE(t.tb);
    CAPTURE(t.m);
    CAPTURE(t.n);
    CAPTURE(t.k);
    CHECK(bound_ratio(dtnn::Precision::bf16, t, kernel) <= 1.0);
  }
}

TEST_CASE("a product in bf16 really rounds its operands: it differs from float32's") {
  // 1 + 2^-9 is no bf16: rounded, it is 1, so the product in bf16 is exactly 1 and in fp32 not.
  const float a = 1.0f + std::ldexp(1.0f, -9), b = 1.0f;
  float c32 = 0, c16 = 0, ch = 0;
  dtnn::gemm(false, false, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c32, 1);
  dtnn::gemm(dtnn::Precision::bf16, false, false, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c16, 1);
  dtnn::gemm(dtnn::Precision::fp16, false, false, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &ch, 1);
  CHECK(c32 == a);
  CHECK(c16 == 1.0f);
  CHECK(ch == a);              // fp16 has 10 mantissa bits: 1 + 2^-9 is one
  const float big = 70000.0f;  // past fp16's largest: infinity, as the format says
  dtnn::gemm(dtnn::Precision::fp16, false, false, 1, 1, 1, 1.0f, &big, 1, &b, 1, 0.0f, &ch, 1);
  CHECK(std::isinf(ch));
}

TEST_CASE("every level's bulk rounding gives the scalar definition's values") {
  // Every fp16 and bf16 boundary region, and random bit patterns over all of float.
  std::vector<float> values;
  for (std::uint32_t bits = 0; bits < 0x10000u; ++bits) {
    const std::uint32_t wide = bits << 16;
    for (std::uint32_t low : {0u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
      values.push_back(from_bits(wide | low));  // bf16 ties and their neighbours
    const float half = dtnn::from_fp16(static_cast<std::uint16_t>(bits));
    if (std::isfinite(half)) {
      values.push_back(half);
      values.push_back(std::nextafter(half, INFINITY));
      values.push_back(std::nextafter(half, -INFINITY));
    }
  }
  dtnn::Rng rng(3);
  for (int i = 0; i < 200000; ++i)
    values.push_back(from_bits(static_cast<std::uint32_t>(rng.uniform(0, 4294967295.0))));
  std::vector<float> out(values.size());
  auto same = [](float a, float b) {
    return (std::isnan(a) && std::isnan(b)) ||
           std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
  };
  for (dtnn::isa::Level level : dtnn::round_kernels().built()) {
    const dtnn::RoundKernels* kernels = dtnn::round_kernels().at(level);
    if (!kernels) continue;  // above this CPU
    CAPTURE(dtnn::isa::name(level));
    for (dtnn::Precision p : {dtnn::Precision::bf16, dtnn::Precision::fp16}) {
      CAPTURE(dtnn::to_string(p));
      (p == dtnn::Precision::bf16 ? kernels->bf16 : kernels->fp16)(
          values.data(), out.data(), static_cast<std::int64_t>(values.size()));
      std::size_t wrong = 0, first = 0;
      for (std::size_t i = 0; i < values.size(); ++i)
        if (!same(out[i], dtnn::round_to(p, values[i])) && wrong++ == 0) first = i;
      CAPTURE(values[first]);
      CHECK(wrong == 0);
    }
  }
}
