// Int8 matrix products for quantised inference (docs/precision.md, "int8 inference"):
//
//   y[i, j] = relu?( float(sum_k a[i, k] b[k, j] + offset[j]) * scale[j] + bias[j] )
//
// a unsigned 8-bit codes in [1, 255] (activations, 128 for zero: int8_product.hpp), b signed
// 8-bit in [-127, 127] (weights), the sums exact in int32 (|a b| <= 255 * 127, so k up to 66,000
// cannot overflow), the epilogue in float32 with one fused multiply-add. The offset takes the 128
// of a's code back out (-128 times b's column sums) and the scale is the product of a's and b's
// quantisation steps.
//
// B is packed once (a layer's weights): groups of four reduction rows with each column's four bytes
// together, byte (k, j) at ((k / 4) * padded_n + j) * 4 + k % 4, padded_n = n rounded up to 32,
// zeros past k and n.
//
// A's rows are read four bytes at a time, in runs (Int8Rows): row i's reduction is `segments` runs
// of 4 * segment_groups bytes, run s at a + i * lda + s * segment_stride. One run of
// int8_padded_k(k) bytes is a plain row-major matrix; a convolution reads its windows straight out
// of the coded image, one run per filter row (int8_conv2d.hpp). Bytes of a run that the packed B
// has zeros for may hold anything, but must be readable.
//
// Kernels by instruction-set level (isa.hpp), each level's loops compiled for it; at the avx512
// level the VNNI kernel (`vpdpbusd`: four u8 x s8 products summed into each int32 lane) runs when
// the CPU also has AVX512-VNNI. One call runs on the calling thread: callers split the rows.
#pragma once
#include <cstdint>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/isa.hpp"

namespace dtnn {

inline constexpr std::int64_t int8_padded_k(std::int64_t k) { return (k + 3) / 4 * 4; }
inline constexpr std::int64_t int8_padded_n(std::int64_t n) { return (n + 31) / 32 * 32; }

// Where A's rows are (above).
struct Int8Rows {
  const std::uint8_t* a = nullptr;
  std::int64_t lda = 0;
  std::int64_t segments = 1;
  std::int64_t segment_groups = 0;  // groups of four bytes per run
  std::int64_t segment_stride = 0;
};

// What follows the int32 sums; offset and scale have n values, bias n or none (null). The offset
// must be -128 times B's column sums: kernels that multiply the codes as they are add it, those
// that multiply code - 128 do not need it.
struct Int8Epilogue {
  const std::int32_t* offset = nullptr;
  const float* scale = nullptr;
  const float* bias = nullptr;
  bool relu = false;
};

// b [k, n] row-major, packed as above (int8_padded_k(k) / 4 * int8_padded_n(n) * 4 bytes).
DTNN_CORE_EXPORT std::vector<std::int8_t> pack_int8_b(const std::int8_t* b, std::int64_t k,
                                                      std::int64_t n);

// The product of m rows and the packed B's n columns (groups: A's segments * segment_groups).
using Int8GemmKernel = void (*)(std::int64_t m, std::int64_t n, const Int8Rows& a,
                                const std::int8_t* packed_b, const Int8Epilogue& epilogue, float* y,
                                std::int64_t ldy);

// Per level: `loops` (plain loops the compiler vectorises for the level); from avx2 up, `avx2`
// (vpmaddubsw on the codes less 128 times |b| with b's sign moved onto them, so that its 16-bit
// pair sums cannot saturate); at avx512, `vnni` (null below it; it still needs a CPU with
// AVX512-VNNI: int8_gemm_kernel() checks both).
struct Int8GemmKernels {
  Int8GemmKernel loops;
  Int8GemmKernel avx2;
  Int8GemmKernel vnni;
};
DTNN_CORE_EXPORT const isa::Family<Int8GemmKernels>& int8_gemm_kernels();
// The kernel this process runs: VNNI where the CPU has it and the ceiling allows avx512, else the
// best level's avx2 kernel, else its loops.
DTNN_CORE_EXPORT Int8GemmKernel int8_gemm_kernel();
// What int8_gemm runs here, for `dtnn info`: "vpdpbusd kernels on AVX512-VNNI", "vpmaddubsw
// kernels on AVX2" or "int32 loops".
DTNN_CORE_EXPORT const char* int8_gemm_path();

// y = the product above with the kernel this process runs, on the calling thread.
DTNN_CORE_EXPORT void int8_gemm(std::int64_t m, std::int64_t n, const Int8Rows& a,
                                const std::int8_t* packed_b, const Int8Epilogue& epilogue, float* y,
                                std::int64_t ldy);

}  // namespace dtnn
