// What the CUDA loss twins share: a loss is the sum over every element of a per-element term,
// reduced on the device in double into one value, read back by the host (an 8-byte copy, the one
// wait of a training step). A twin gives its term:
//
//   struct Term { template <class T> __device__ double operator()(T p, T t) const; };
//   double loss = sum_.sum(Term{}, p, t) / rows;
#pragma once
#include <cuda_runtime_api.h>

#include <memory>

#include "check.hpp"
#include "context.hpp"
#include "launch.cuh"

namespace dtnn::cuda {

// One block: each thread sums its stride of term(p, t), then a shared-memory tree to *out.
template <class Term, class T>
__global__ void loss_sum_kernel(Term term, double* out, const T* p, const T* t, std::size_t n) {
  __shared__ double partial[kThreads];
  double sum = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) sum += term(p[i], t[i]);
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}

// The device double the kernel sums into, allocated at first use.
class LossSum {
 public:
  // The sum over p's elements of term(p_i, t_i), once the kernels issued so far have run.
  template <class Term>
  double sum(const Term& term, const Tensor& p, const Tensor& t) {
    Context& cx = Context::get();
    if (!block_) block_ = cx.allocate(sizeof(double));
    auto* out = reinterpret_cast<double*>(block_.get());
    by_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      loss_sum_kernel<<<1, kThreads, 0, cx.stream()>>>(term, out, static_cast<const T*>(p.raw()),
                                                       static_cast<const T*>(t.raw()),
                                                       std::size_t(p.numel()));
    });
    check_launch();
    double host = 0;
    DTNN_CUDA(cudaMemcpyAsync(&host, out, sizeof host, cudaMemcpyDeviceToHost, cx.stream()));
    cx.synchronize();
    return host;
  }

 private:
  std::shared_ptr<std::byte> block_;
};

}  // namespace dtnn::cuda
