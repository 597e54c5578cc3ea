// The vector width of the kernels built for AVX-512. Some CPUs with AVX-512 run a 512-bit
// multiply-add at the rate of a 256-bit one: there 64-byte vectors double a kernel's flops (AMD
// Zen 5, family 26 model 2: 257-274 GFLOPS a core on 64-byte vectors, half that on 32-byte ones).
// Others split each 512-bit instruction into two 256-bit halves: there 64-byte vectors gain
// nothing and pad narrow products to twice the width (AMD Zen 5, family 26 model 17: 117 GFLOPS a
// core on either). Which one this CPU is gets measured once, not read from a table of models: the
// same multiply-add chains as peak.hpp's, on 64-byte and on 32-byte vectors.
#pragma once
#include <string>

#include "dtnn/core_export.hpp"

namespace dtnn {

class Communicator;

struct VectorWidth {
  int bytes = 32;          // the vectors AVX-512 kernels use: 64 or 32
  double wide_rate = 0;    // 64-byte multiply-adds a second over 32-byte ones (0: not measured)
  std::string decided_by;  // for `dtnn info`: how `bytes` was chosen
};

// Decided once per process, on first use. DTNN_VECTOR_BYTES=32|64 sets it (any other value
// throws, naming the variable); otherwise 64 when the process runs the avx512 level and 64-byte
// multiply-adds run at least kWideFrom as many a second as 32-byte ones, else 32.
inline constexpr double kWideFrom = 0.75;
DTNN_CORE_EXPORT const VectorWidth& avx512_vector_width();

// Replaces the width this process uses. Call it before any kernel is chosen (a plugin reads the
// width when it is created, the small GEMM kernels on every product).
DTNN_CORE_EXPORT void set_avx512_vector_width(const VectorWidth& width);

// Every rank of a data-parallel run takes rank 0's width: kernels of different widths round a
// rank's local sums apart, so replicas would drift in their last bits. The others do not measure
// (a measurement taken while the ranks share the cores can come out anything). One broadcast;
// every rank calls it, before the model is built.
DTNN_CORE_EXPORT void agree_avx512_vector_width(Communicator& comm);

}  // namespace dtnn
