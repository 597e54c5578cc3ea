// What the CUDA loss twins share: a loss is the sum over every element of a per-element term,
// reduced on the device in double into one value, read back by the host (an 8-byte copy, the one
// wait of a training step). A twin gives its term, told the element's index i (its class is
// i % classes, the last axis):
//
//   struct Term { template <class T> __device__ double operator()(T p, T t, std::size_t i) const;
//   }; double loss = sum_.sum(Term{}, p, t) / rows;
//
// and its class weights (class_weights.hpp) as DeviceWeights, read in a kernel as weight(w, i, m).
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "check.hpp"
#include "context.hpp"
#include "launch.cuh"

namespace dtnn::cuda {

// One block: each thread sums its stride of term(p, t), then a shared-memory tree to *out.
template <class Term, class T>
__global__ void loss_sum_kernel(Term term, double* out, const T* p, const T* t, std::size_t n) {
  __shared__ double partial[kThreads];
  double sum = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) sum += term(p[i], t[i], i);
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

// A loss's class weights on the device, uploaded once; data() is null without weights.
class DeviceWeights {
 public:
  explicit DeviceWeights(const std::vector<double>& host) {
    if (host.empty()) return;
    Context& cx = Context::get();
    block_ = cx.allocate(host.size() * sizeof(double));
    DTNN_CUDA(cudaMemcpyAsync(block_.get(), host.data(), host.size() * sizeof(double),
                              cudaMemcpyHostToDevice, cx.stream()));
    cx.synchronize();
  }
  const double* data() const { return reinterpret_cast<const double*>(block_.get()); }

 private:
  std::shared_ptr<std::byte> block_;
};

// Element i's class weight: w[i % classes], or 1 without weights.
__device__ inline double weight(const double* w, std::size_t i, std::size_t classes) {
  return w ? w[i % classes] : 1.0;
}

}  // namespace dtnn::cuda
