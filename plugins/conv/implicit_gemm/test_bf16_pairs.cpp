// implicit_gemm's bf16 pairs (bf16_ukr.hpp): the vector conversion writes what the plain one does,
// in place, for the panel widths the kernel packs (12 rows, 32 columns) and odd depths; and the
// micro-kernel sums pairs of products as a float64 product of the rounded values does.
#define DTNN_IMPLICIT_GEMM_BF16_ANY_BUILD 1
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "bf16_ukr.hpp"

namespace bf16 = dtnn::implicit_gemm::bf16;

namespace {

std::vector<float> random_panel(std::int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = u(gen);
  return v;
}

}  // namespace

TEST_CASE("implicit_gemm bf16: the vector pair conversion is the plain one") {
  if (!bf16::available()) {
    MESSAGE("no AVX512-BF16 on this CPU: the conversion is not used here");
    return;
  }
  for (const std::int64_t width : {bf16::kMr, bf16::kNr, std::int64_t{7}})
    for (const std::int64_t kc : {1, 2, 15, 288, 383}) {
      CAPTURE(width);
      CAPTURE(kc);
      std::vector<float> plain = random_panel(width * kc, static_cast<unsigned>(width * kc));
      plain[3] = 0.0f;
      if (plain.size() > 6) {  // ties, halfway between bf16 neighbours: to the even one
        plain[5] = 1.0f + 1.0f / 256.0f;
        plain[6] = -(1.0f + 3.0f / 256.0f);
      }
      std::vector<float> fast = plain;
      bf16::to_pairs(plain.data(), width, kc);
      bf16::to_pairs_fast(fast.data(), width, kc);
      const std::size_t words = static_cast<std::size_t>((kc + 1) / 2 * width);
      CHECK(std::memcmp(plain.data(), fast.data(), words * sizeof(float)) == 0);
    }
}

TEST_CASE("implicit_gemm bf16: the micro-kernel sums the rounded products") {
  if (!bf16::available()) {
    MESSAGE("no AVX512-BF16 on this CPU: the micro-kernel is not used here");
    return;
  }
  const std::int64_t k = 37, mr = bf16::kMr, nr = bf16::kNr;
  std::vector<float> a = random_panel(mr * k, 1), b = random_panel(nr * k, 2);
  auto rounded = [](float x) { return dtnn::from_bf16(dtnn::to_bf16(x)); };
  std::vector<double> want(static_cast<std::size_t>(mr * nr), 0.0);
  for (std::int64_t r = 0; r < mr; ++r)
    for (std::int64_t j = 0; j < nr; ++j)
      for (std::int64_t p = 0; p < k; ++p)
        want[static_cast<std::size_t>(r * nr + j)] +=
            double(rounded(a[static_cast<std::size_t>(p * mr + r)])) *
            double(rounded(b[static_cast<std::size_t>(p * nr + j)]));
  bf16::to_pairs_fast(a.data(), mr, k);
  bf16::to_pairs_fast(b.data(), nr, k);
  for (const bool row_major : {true, false}) {
    CAPTURE(row_major);
    std::vector<float> c(static_cast<std::size_t>(mr * nr), 1.0f);
    float alpha = 2.0f, beta = 0.5f;
    const inc_t rs = row_major ? nr : 1, cs = row_major ? 1 : mr;
    bf16::ukr(mr, nr - 3, k, &alpha, a.data(), b.data(), &beta, c.data(), rs, cs, nullptr, nullptr);
    for (std::int64_t r = 0; r < mr; ++r)
      for (std::int64_t j = 0; j < nr; ++j) {
        const float got = c[static_cast<std::size_t>(r * rs + j * cs)];
        if (j >= nr - 3) {
          CHECK(got == 1.0f);  // past n: untouched
          continue;
        }
        const double expect = 2.0 * want[static_cast<std::size_t>(r * nr + j)] + 0.5;
        CHECK(std::abs(got - expect) <= 1e-5 * (1.0 + std::abs(expect)) * k);
      }
  }
}
