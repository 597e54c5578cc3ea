// What the CUDA loss twins share: a loss is the sum over every element of a per-element term,
// reduced on the device in double (LossTotals: fixed-order partial sums, the same bits every run)
// into one value, read back by the host (an 8-byte copy, the one wait of a training step). A twin
// gives its term, told the element's index i (its class is i % classes, the last axis):
//
//   struct Term { template <class T> __device__ double operator()(T p, T t, std::size_t i) const;
//   }; double loss = sum_.sum(Term{}, p, t) / rows;
//
// and its class weights (class_weights.hpp) as DeviceWeights, read in a kernel as weight(w, i, m).
// A twin that needs several sums at once, or a sum that its gradient kernel reads on the device
// (a normalizer: the host then never waits in backward), uses LossTotals.
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "block_reduce.cuh"
#include "check.hpp"
#include "context.hpp"
#include "dtnn/class_targets.hpp"
#include "launch.cuh"

namespace dtnn::cuda {

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

// K sums of term(i) over i in [0, n), from a term that gives them for one i:
//   struct Term { __device__ Terms<K> operator()(std::size_t i) const; };
template <int K>
struct Terms {
  double v[K] = {};
};

inline constexpr unsigned kTotalsBlocks = 128;  // partial sums per total

// Each block sums its grid stride of term(i) into partial[block * K + k]...
template <int K, class Term>
__global__ void totals_partial_kernel(Term term, double* partial, std::size_t n) {
  double sums[K] = {};
  DTNN_GRID_STRIDE(i, n) {
    const Terms<K> t = term(i);
    for (int k = 0; k < K; ++k) sums[k] += t.v[k];
  }
  for (int k = 0; k < K; ++k) {
    const double total = block_sum(sums[k]);
    if (threadIdx.x == 0) partial[blockIdx.x * K + k] = total;
  }
}

// ... and one thread adds the blocks' sums in order: the same bits every run.
template <int K>
__global__ void totals_final_kernel(double* out, const double* partial, unsigned partials) {
  for (int k = 0; k < K; ++k) {
    double total = 0;
    for (unsigned b = 0; b < partials; ++b) total += partial[b * K + k];
    out[k] = total;
  }
}

// The device doubles those sums land in, allocated at first use; launch() leaves them on the
// device for the kernels issued after it, read() brings them to the host (waiting for them).
template <int K>
class LossTotals {
 public:
  template <class Term>
  const double* launch(const Term& term, std::size_t n) {
    Context& cx = Context::get();
    if (!block_) block_ = cx.allocate((kTotalsBlocks + 1) * K * sizeof(double));
    double* partial = totals() + K;
    const unsigned grid = std::min(blocks(n), kTotalsBlocks);
    totals_partial_kernel<K><<<grid, kThreads, 0, cx.stream()>>>(term, partial, n);
    totals_final_kernel<K><<<1, 1, 0, cx.stream()>>>(totals(), partial, grid);
    check_launch();
    return totals();
  }
  template <class Term>
  std::array<double, K> read(const Term& term, std::size_t n) {
    launch(term, n);
    std::array<double, K> host{};
    Context& cx = Context::get();
    DTNN_CUDA(
        cudaMemcpyAsync(host.data(), totals(), sizeof host, cudaMemcpyDeviceToHost, cx.stream()));
    cx.synchronize();
    return host;
  }

 private:
  double* totals() { return reinterpret_cast<double*>(block_.get()); }
  std::shared_ptr<std::byte> block_;
};

// A per-element term(p_i, t_i, i) as LossTotals takes terms.
template <class Term, class T>
struct ElementTerm {
  Term term;
  const T *p, *t;
  __device__ Terms<1> operator()(std::size_t i) const {
    Terms<1> out;
    out.v[0] = term(p[i], t[i], i);
    return out;
  }
};

// The sum over p's elements of term(p_i, t_i, i), through LossTotals: the one device reduction
// every loss twin's sums take.
class LossSum {
 public:
  template <class Term>
  double sum(const Term& term, const Tensor& p, const Tensor& t) {
    return by_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const ElementTerm<Term, T> each{term, static_cast<const T*>(p.raw()),
                                      static_cast<const T*>(t.raw())};
      return totals_.read(each, std::size_t(p.numel()))[0];
    });
  }

 private:
  LossTotals<1> totals_;
};

// Class-id targets on the device: the value of row r's target and whether it is a class id, the
// ignored id or neither (counted by the twins, which then call throw_bad_target).
template <class T>
__device__ inline long long target_id(const T* t, std::size_t r, std::size_t classes,
                                      double ignored, bool* bad) {
  const double v = double(t[r]);
  *bad = false;
  if (v == ignored) return -1;
  if (!(v >= 0 && v < double(classes))) {
    *bad = true;
    return -1;
  }
  return static_cast<long long>(v);
}

// The error the CPU loss gives for targets t that are not all class ids (or the ignored id):
// the targets are copied to the host and read as the CPU loss reads them.
[[noreturn]] inline void throw_bad_target(const Tensor& predictions, const Tensor& t,
                                          const std::string& who, double ignored) {
  const Tensor host = t.to(Device::cpu);
  const ClassTargets targets(predictions, host, who, ignored);
  by_dtype(host.dtype(), [&](auto z) {
    using T = decltype(z);
    for (std::int64_t r = 0; r < targets.rows(); ++r) targets.id(host.data<T>(), r);
  });
  throw Error(who + ": a target is not a class id");
}

// Element i's class weight: w[i % classes], or 1 without weights.
__device__ inline double weight(const double* w, std::size_t i, std::size_t classes) {
  return w ? w[i % classes] : 1.0;
}

}  // namespace dtnn::cuda
