// int8_gemm (dtnn/int8_gemm.hpp): B's packing, and the choice of kernel.
#include "dtnn/int8_gemm.hpp"

#include "int8_gemm_kernels.hpp"

namespace dtnn {

namespace {

const isa::Family<Int8GemmKernels> kInt8Gemm(
    "core/int8_gemm", {
                          {isa::Level::portable, &detail::portable::int8_gemm_kernels},
#ifdef DTNN_HAVE_ISA_avx2
                          {isa::Level::avx2, &detail::avx2::int8_gemm_kernels},
#endif
#ifdef DTNN_HAVE_ISA_avx512
                          {isa::Level::avx512, &detail::avx512::int8_gemm_kernels},
#endif
                      });

bool cpu_has_avx512_vnni() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx512vnni");
  return has;
#else
  return false;
#endif
}

}  // namespace

std::vector<std::int8_t> pack_int8_b(const std::int8_t* b, std::int64_t k, std::int64_t n) {
  const std::int64_t pn = int8_padded_n(n);
  std::vector<std::int8_t> packed(static_cast<std::size_t>(int8_padded_k(k) * pn), 0);
  for (std::int64_t kk = 0; kk < k; ++kk)
    for (std::int64_t j = 0; j < n; ++j)
      packed[static_cast<std::size_t>(((kk / 4) * pn + j) * 4 + kk % 4)] = b[kk * n + j];
  return packed;
}

const isa::Family<Int8GemmKernels>& int8_gemm_kernels() { return kInt8Gemm; }

Int8GemmKernel int8_gemm_kernel() {
  const Int8GemmKernels& best = kInt8Gemm.best();
  if (best.vnni && cpu_has_avx512_vnni()) return best.vnni;
  return best.avx2 ? best.avx2 : best.loops;
}

const char* int8_gemm_path() {
  const Int8GemmKernels& best = kInt8Gemm.best();
  if (best.vnni && cpu_has_avx512_vnni()) return "vpdpbusd kernels on AVX512-VNNI";
  return best.avx2 ? "vpmaddubsw kernels on AVX2" : "int32 loops";
}

void int8_gemm(std::int64_t m, std::int64_t n, const Int8Rows& a, const std::int8_t* packed_b,
               const Int8Epilogue& epilogue, float* y, std::int64_t ldy) {
  if (m <= 0 || n <= 0) return;
  static const Int8GemmKernel kernel = int8_gemm_kernel();
  kernel(m, n, a, packed_b, epilogue, y, ldy);
}

}  // namespace dtnn
