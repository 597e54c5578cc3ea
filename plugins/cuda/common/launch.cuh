// What the CUDA sources of the plugins share to launch element-wise and row-wise kernels on the
// context's compute stream: the block size, a capped grid over n items with a grid-stride loop,
// the float/double dispatch and the launch check. CUDA code: include it from .cu files only.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "check.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::cuda {

inline constexpr int kThreads = 256;

// Enough blocks for n items with a grid-stride loop, capped (the loop covers the rest).
inline unsigned blocks(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? (b ? b : 1) : 65535 * 8);
}

// A grid of a block per row (or per sample) for kernels that loop `for (r = blockIdx.x; r < rows;
// r += gridDim.x)`, capped as blocks() caps it.
inline unsigned row_blocks(std::int64_t rows) {
  return static_cast<unsigned>(rows < 65535 * 8 ? rows : 65535 * 8);
}

// Runs f(T{}) with T = float or double according to dtype; returns what f returns.
template <class F>
auto by_dtype(DType dtype, F&& f) {
  if (dtype == DType::float64) return f(double{});
  return f(float{});
}

inline void check_launch() { DTNN_CUDA(cudaGetLastError()); }

}  // namespace dtnn::cuda

// for (i = this thread's first item; i < n; i += the grid's threads)
#define DTNN_GRID_STRIDE(i, n)                                                      \
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < (n); \
       i += std::size_t(blockDim.x) * gridDim.x)
