// dtnn::gemm against a plain triple loop, for every transpose combination, alpha/beta, float and
// double, over shapes that take both the small-kernel and the BLIS paths (and their edges: BLIS's
// packed and small/unpacked kernels, which ctest also runs under each DTNN_BLIS_SUP).
#include <doctest/doctest.h>

#include <type_traits>
#include <vector>

#include "dtnn/gemm.hpp"
#include "dtnn/rng.hpp"
#include "dtnn/runtime.hpp"
#include "dtnn/vector_width.hpp"

namespace {

// dtnn::gemm, or the small kernels of one instruction-set level when `kernels` is given, against
// the triple loop.
template <class T>
double max_error(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, T alpha, T beta,
                 const dtnn::SmallGemmKernels* kernels = nullptr, bool tight = false) {
  dtnn::Rng rng(static_cast<std::uint64_t>(m * 131 + n * 17 + k));
  // Padded strides, or rows one after another (the kernels read such a B where it is).
  const std::int64_t pad = tight ? 0 : 1;
  const std::int64_t lda = ta ? m + pad : k + 2 * pad, ldb = tb ? k + 3 * pad : n + pad,
                     ldc = n + 2 * pad;
  std::vector<T> a(static_cast<std::size_t>((ta ? k : m) * lda)),
      b(static_cast<std::size_t>((tb ? n : k) * ldb));
  std::vector<T> c(static_cast<std::size_t>(m * ldc));
  for (auto& v : a) v = static_cast<T>(rng.uniform(-1, 1));
  for (auto& v : b) v = static_cast<T>(rng.uniform(-1, 1));
  for (auto& v : c) v = static_cast<T>(rng.uniform(-1, 1));
  std::vector<T> expected = c;
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (std::int64_t p = 0; p < k; ++p)
        s += double(ta ? a[static_cast<std::size_t>(p * lda + i)]
                       : a[static_cast<std::size_t>(i * lda + p)]) *
             double(tb ? b[static_cast<std::size_t>(j * ldb + p)]
                       : b[static_cast<std::size_t>(p * ldb + j)]);
      auto& e = expected[static_cast<std::size_t>(i * ldc + j)];
      e = static_cast<T>(alpha * s + beta * double(e));
    }
  if (!kernels)
    dtnn::gemm(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  else if constexpr (std::is_same_v<T, float>)
    kernels->f32(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  else
    kernels->f64(ta, tb, m, n, k, alpha, a.data(), lda, b.data(), ldb, beta, c.data(), ldc);
  double err = 0;
  for (std::size_t i = 0; i < c.size(); ++i)
    err = std::max(err, std::abs(double(c[i]) - double(expected[i])));
  return err;  // includes the padding columns: they must be untouched
}

}  // namespace

TEST_CASE("gemm matches the triple loop on every path") {
  dtnn::initialize_runtime();
  // The last six: the rows and columns from which gemm packs where BLIS would take its
  // unpacked kernels, then deep narrow products on either side of the small kernels' limits.
  const std::int64_t shapes[][3] = {
      {37, 4, 9},      {100, 8, 36},   {33, 10, 128},   {9, 4, 2000},    {36, 8, 5000},
      {64, 36, 8},     {200, 47, 20},  {5, 3, 2},       {17, 1, 1},      {64, 128, 300},
      {130, 70, 90},   {64, 48, 64},   {300, 17, 257},  {1, 5, 7},       {64, 512, 10},
      {13, 100, 3},    {64, 49, 16},   {96, 200, 40},   {50, 130, 33},   {64, 64, 64},
      {64, 65, 65},    {64, 200, 700}, {128, 100, 300}, {129, 70, 80},   {64, 100, 1500},
      {1030, 130, 70}, {1030, 60, 50}, {260, 129, 100}, {130, 140, 300}, {300, 20, 1100},
      {1100, 24, 200}};
  for (auto& s : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true}) {
        CAPTURE(s[0]);
        CAPTURE(s[1]);
        CAPTURE(s[2]);
        CAPTURE(ta);
        CAPTURE(tb);
        CHECK(max_error<double>(ta, tb, s[0], s[1], s[2], 1.0, 0.0) < 1e-10);
        CHECK(max_error<double>(ta, tb, s[0], s[1], s[2], 0.5, 1.0) < 1e-10);
        CHECK(max_error<float>(ta, tb, s[0], s[1], s[2], 1.0f, 1.0f) < 2e-3f);
      }
}

TEST_CASE("the small GEMM kernels of every instruction-set level match the triple loop") {
  // Each level this CPU runs (core/small_gemm is built for all of them); one it lacks is not
  // handed out. Shapes up to the kernels' width (48 columns), with the row and depth edges; the
  // last four whole vectors wide (8, 16, 32 and 48 columns).
  dtnn::initialize_runtime();
  const std::int64_t shapes[][3] = {{37, 4, 9},   {100, 8, 36},   {33, 10, 128},   {9, 4, 2000},
                                    {64, 36, 8},  {200, 47, 20},  {5, 3, 2},       {17, 1, 1},
                                    {64, 48, 64}, {300, 17, 257}, {1, 5, 7},       {64, 512, 10},
                                    {70, 61, 33}, {64, 130, 600}, {64, 100, 1500}, {40, 8, 300},
                                    {33, 16, 70}, {50, 32, 520},  {21, 48, 90}};
  const auto& family = dtnn::small_gemm_kernels();
  CHECK(family.built() == dtnn::isa::platform_levels());
  int levels = 0;
  for (dtnn::isa::Level level : dtnn::isa::platform_levels()) {
    CAPTURE(dtnn::isa::name(level));
    const dtnn::SmallGemmKernels* kernels = family.at(level);
    CHECK((kernels != nullptr) == (level <= dtnn::isa::ceiling()));
    if (!kernels) continue;
    ++levels;
    // The width each level's table says it runs on: avx512's as vector_width.hpp decided.
    const int bytes = level == dtnn::isa::Level::avx512 ? dtnn::avx512_vector_width().bytes
                      : level == dtnn::isa::Level::avx2 ? 32
                                                        : 16;
    CHECK(kernels->vector_bytes() == bytes);
    for (auto& s : shapes)
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          if (ta && !tb && s[1] > 48) continue;  // tn takes at most 48 columns
          CAPTURE(s[0]);
          CAPTURE(s[1]);
          CAPTURE(s[2]);
          CAPTURE(ta);
          CAPTURE(tb);
          CHECK(max_error<double>(ta, tb, s[0], s[1], s[2], 1.0, 0.0, kernels) < 1e-10);
          CHECK(max_error<double>(ta, tb, s[0], s[1], s[2], 0.5, 1.0, kernels) < 1e-10);
          CHECK(max_error<float>(ta, tb, s[0], s[1], s[2], 1.0f, 1.0f, kernels) < 2e-3f);
          CHECK(max_error<float>(ta, tb, s[0], s[1], s[2], 1.0f, 1.0f, kernels, true) < 2e-3f);
          CHECK(max_error<double>(ta, tb, s[0], s[1], s[2], 0.5, 1.0, kernels, true) < 1e-10);
        }
  }
  CHECK(levels >= 1);
}
