// The finite check of training.on_nonfinite (nonfinite.hpp), compiled once per instruction-set
// level into namespace DTNN_ISA_VARIANT, with no std templates (the rules of small_gemm_kernels).
//
// x - x is +0 for every finite x and NaN for a NaN or an infinity, so a sum of x - x over the
// values stays 0 exactly when all are finite. Four such sums over the widest vectors of the level
// keep as many loads in flight as the core allows: the check streams every gradient once per step
// (simplemlp's 670,000 took 4-6% of its step with one 16-byte integer test at a time).
#include "finite_kernels.hpp"

#include "dtnn/simd.hpp"

namespace dtnn::detail::DTNN_ISA_VARIANT {

namespace {

template <class T>
bool finite(const T* p, std::int64_t n) {
  constexpr int kBytes = simd::kWidestBytes, kLanes = simd::kLanes<T, kBytes>;
  using V = simd::Vec<T, kBytes>;
  V s0 = {}, s1 = {}, s2 = {}, s3 = {};
  std::int64_t i = 0;
  for (; i + 4 * kLanes <= n; i += 4 * kLanes) {
    const V a = simd::load<T, kBytes>(p + i), b = simd::load<T, kBytes>(p + i + kLanes);
    const V c = simd::load<T, kBytes>(p + i + 2 * kLanes);
    const V d = simd::load<T, kBytes>(p + i + 3 * kLanes);
    s0 += a - a;
    s1 += b - b;
    s2 += c - c;
    s3 += d - d;
  }
  const V all = (s0 + s1) + (s2 + s3);
  T sum = 0;
  for (int l = 0; l < kLanes; ++l) sum += all[l];
  for (; i < n; ++i) sum += p[i] - p[i];
  return sum == T(0);
}

bool finite_f32(const float* p, std::int64_t n) { return finite(p, n); }
bool finite_f64(const double* p, std::int64_t n) { return finite(p, n); }

}  // namespace

const FiniteKernels& finite_kernels() {
  static const FiniteKernels table{&finite_f32, &finite_f64};
  return table;
}

}  // namespace dtnn::detail::DTNN_ISA_VARIANT
