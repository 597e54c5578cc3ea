// The sum or the maximum of one value per thread over a thread block, for the row-wise kernels
// (layer_norm's statistics, attention's softmax, the losses' totals): warp shuffles, then the
// warps' results combined by every thread in the same order, so that each run gives the same bits.
// CUDA code: include it from .cu files only.
#pragma once
#include <cuda_runtime.h>

namespace dtnn::cuda {

struct Add {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a + b;
  }
};
struct Max {
  template <class T>
  __device__ T operator()(T a, T b) const {
    return a > b ? a : b;
  }
};

// Every thread of the block must call it (it synchronises); blockDim.x a multiple of 32, at most
// 1024. Each thread gets the block's result.
template <class T, class Op>
__device__ T block_reduce(T v, Op op) {
  __shared__ T warp_results[32];
  for (int offset = 16; offset > 0; offset /= 2)
    v = op(v, __shfl_down_sync(0xffffffffu, v, offset));
  __syncthreads();  // the previous call's readers are done with warp_results
  if (threadIdx.x % 32 == 0) warp_results[threadIdx.x / 32] = v;
  __syncthreads();
  T result = warp_results[0];
  for (unsigned w = 1; w < blockDim.x / 32; ++w) result = op(result, warp_results[w]);
  return result;
}

template <class T>
__device__ T block_sum(T v) {
  return block_reduce(v, Add{});
}
template <class T>
__device__ T block_max(T v) {
  return block_reduce(v, Max{});
}

}  // namespace dtnn::cuda
