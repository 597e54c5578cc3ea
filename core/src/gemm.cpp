#include "dtnn/gemm.hpp"

#include <blis.h>
#include <omp.h>
#include <strings.h>

#include <cstdlib>
#include <string>
#include <string_view>

#include "dtnn/error.hpp"
#include "lowp_gemm.hpp"
#include "small_gemm.hpp"

namespace dtnn {

namespace {
// Below this many multiply-adds a product runs on one thread: BLIS's thread team start-up and
// partitioning cost more than the work (measured with bench/dtnn_bench on 2 cores).
constexpr double kParallelMinMacs = 96.0 * 96.0 * 96.0;

// OMP_WAIT_POLICY=passive says the cores are shared with other processes (the tests run so, side
// by side). BLIS 0.9's own barriers spin whatever OpenMP is told: two such processes on two cores
// then took minutes for seconds of work (AMD Zen 5, where BLIS runs its skx kernels, which have no
// small-matrix path, for every product). So there a product runs on one thread. (Splitting it
// over OpenMP's threads, BLIS single-threaded in each, kept the threads but made BLIS grow its
// pool of packing buffers whenever two threads first overlapped, which a busy machine put at any
// step: the steady state then allocated.)
bool passive_waiting() {
  static const bool passive = [] {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    return policy && strcasecmp(policy, "passive") == 0;
  }();
  return passive;
}

}  // namespace

int detail::gemm_threads(std::int64_t m, std::int64_t n, std::int64_t k) {
  const double macs = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  // Inside an OpenMP parallel region the caller already owns the threads.
  return (passive_waiting() || macs < kParallelMinMacs || omp_in_parallel())
             ? 1
             : omp_get_max_threads();
}

namespace {

// DTNN_BLIS_SUP: which products BLIS may take to its small/unpacked ("sup") kernels.
enum class SupSetting { automatic, blis, off };
SupSetting sup_setting() {
  static const SupSetting setting = [] {
    const char* v = std::getenv("DTNN_BLIS_SUP");
    const std::string_view value = v ? v : "";
    if (value.empty() || value == "auto") return SupSetting::automatic;
    if (value == "blis") return SupSetting::blis;
    if (value == "off") return SupSetting::off;
    throw Error("DTNN_BLIS_SUP='" + std::string(value) + "': expected auto, blis or off");
  }();
  return setting;
}

// BLIS 0.9's kernel sets for AVX2 CPUs (zen, zen2, zen3, haswell) take a product to their
// small/unpacked ("sup") kernels when any dimension is below a threshold (zen3: m < 512, n < 200
// or k < 240); those read the operands in place instead of packing them. Where the product has
// many rows, and for the weight gradients' A^T B, that is slower than packing, most of all where
// B is transposed (its rows read with a stride). AMD EPYC Zen 3 (family 25 model 1), GFLOPS
// packed / sup, 1 thread: 4096x512x128 73 / 57, 4096x512x128 nt 75 / 53, 4096x576x64 nt 61 / 33,
// 128x512x4096 tn 63 / 47, 128x512x256 tn 64-80 / 50-59, 512x512x64 tn 71 / 49; 2 threads:
// 4096x512x128 nt 155-161 / 85-112, 128x384x4096 tn 107-131 / 94-110. On few rows at two
// threads the sup kernels win (nn 64x128x128 98 / 57, 32x100x100 67 / 24; nt 64x512x512), and
// keep them. The grid: docs/benchmarks.md, session 46. skx (AVX-512) has no sup kernels.
bool blis_may_use_sup(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                      int threads) {
  switch (sup_setting()) {
    case SupSetting::blis:
      return true;
    case SupSetting::off:
      return false;
    case SupSetting::automatic:
      break;
  }
  if (trans_a) return !(m >= 128 && n >= 128 && (k >= 128 || threads == 1));
  if (trans_b) return !(m >= 1024 || threads == 1);
  return !(n >= 128 && (m >= 1024 || (threads == 1 && m >= 256)));
}

rntm_t runtime_for(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k) {
  rntm_t rntm;
  bli_rntm_init(&rntm);
  const int threads = detail::gemm_threads(m, n, k);
  if (!blis_may_use_sup(trans_a, trans_b, m, n, k, threads)) bli_rntm_disable_l3_sup(&rntm);
  if (threads > 1 && !trans_a && m <= 256) {
    // A batch-sized M (fully connected layers): splitting M between the threads measured as fast or
    // faster than BLIS's own choice on every such shape (e.g. 64x512x784: 205 vs 177 GFLOPS).
    bli_rntm_set_ways(1, 1, threads, 1, 1, &rntm);
  } else {
    bli_rntm_set_num_threads(threads, &rntm);
  }
  return rntm;
}

// Narrow outputs with a short reduction (or the tn reduction over many rows) go to the small
// kernels; BLIS's micro-kernels (6x16 and up) waste most of their work there. So do nt products
// of few rows (fc's backward-data, dy W^T for a batch) where the small kernels have 16-float
// vectors (`few_rows`): BLIS packs all of B for them, used by only m rows (1 thread, AMD Zen 5
// model 2, GFLOPS BLIS / small: 64x4096x512 nt 102 / 149, 64x784x512 116 / 160, 128x4096x512
// 134 / 166; at 512 rows BLIS is faster, 214 / 193; nn products of few rows gained nothing, nor
// did AVX2's 8-float kernels: 64x784x512 nt 117 / 100 against BLIS 'zen3').
bool use_small(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
               bool few_rows = false) {
  if (trans_a && !trans_b) return n <= detail::kSmallWidth && m <= 1024;  // k: any length
  if (few_rows && trans_b && !trans_a && m <= kSmallGemmRows) return true;
  if (n > detail::kSmallWidth) return k <= detail::kShallowDepth;
  return k <= 1024 && m >= 16;
}
}  // namespace

const char* blis_sup_policy() {
  switch (sup_setting()) {
    case SupSetting::blis:
      return "BLIS's own thresholds (DTNN_BLIS_SUP=blis)";
    case SupSetting::off:
      return "never: every product packed (DTNN_BLIS_SUP=off)";
    case SupSetting::automatic:
      break;
  }
  return "packed where products have many rows (A B and A B^T from 1024, at one thread from 256 "
         "and every A B^T) and for A^T B from 128 x 128; BLIS's small/unpacked kernels below "
         "(DTNN_BLIS_SUP=auto)";
}

void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
          const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c,
          std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  const SmallGemmKernels& small = small_gemm_kernels().best();
  if (use_small(trans_a, trans_b, m, n, k, small.vector_bytes() == 64))  // 16-float vectors
    return small.f32(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  rntm_t rntm = runtime_for(trans_a, trans_b, m, n, k);
  bli_sgemm_ex(trans_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
               trans_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, m, n, k, &alpha, const_cast<float*>(a),
               lda, 1, const_cast<float*>(b), ldb, 1, &beta, c, ldc, 1, nullptr, &rntm);
}

void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
          const double* a, std::int64_t lda, const double* b, std::int64_t ldb, double beta,
          double* c, std::int64_t ldc) {
  if (m == 0 || n == 0) return;
  if (use_small(trans_a, trans_b, m, n, k))
    return small_gemm_kernels().best().f64(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta,
                                           c, ldc);
  rntm_t rntm = runtime_for(trans_a, trans_b, m, n, k);
  bli_dgemm_ex(trans_a ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
               trans_b ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, m, n, k, &alpha,
               const_cast<double*>(a), lda, 1, const_cast<double*>(b), ldb, 1, &beta, c, ldc, 1,
               nullptr, &rntm);
}

}  // namespace dtnn
