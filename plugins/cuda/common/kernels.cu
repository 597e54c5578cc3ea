#include <cuda_runtime.h>

#include <cstdint>

#include "check.hpp"
#include "dtnn/update_rules.hpp"
#include "kernels.hpp"

namespace dtnn::cuda::kernels {

namespace {

constexpr int kThreads = 256;

// Enough blocks for n elements with a grid-stride loop, capped (the loop covers the rest).
unsigned blocks(std::size_t n) {
  const std::size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 65535 * 8 ? (b ? b : 1) : 65535 * 8);
}

#define DTNN_GRID_STRIDE(i, n)                                                   \
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < (n); \
       i += std::size_t(blockDim.x) * gridDim.x)

// Runs f.template operator()<T>() with T = float or double according to dtype.
template <class F>
void by_dtype(DType dtype, F&& f) {
  if (dtype == DType::float64)
    f(double{});
  else
    f(float{});
}

void check_launch() { DTNN_CUDA(cudaGetLastError()); }

template <class T>
__global__ void scale_kernel(T* y, const T* x, std::size_t n, T alpha) {
  DTNN_GRID_STRIDE(i, n) y[i] = alpha * x[i];
}

template <class T>
__global__ void add_bias_rows_kernel(T* y, const T* b, std::size_t n, std::int64_t cols) {
  DTNN_GRID_STRIDE(i, n) y[i] += b[i % cols];
}

// One thread per column; consecutive threads read consecutive addresses of a row.
template <class T>
__global__ void add_column_sums_kernel(T* db, const T* dy, std::int64_t rows, std::int64_t cols) {
  const std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (c >= cols) return;
  double sum = 0;
  for (std::int64_t r = 0; r < rows; ++r) sum += dy[r * cols + c];
  db[c] += T(sum);
}

template <class T>
__global__ void leaky_forward_kernel(T* y, const T* x, std::size_t n, T slope) {
  DTNN_GRID_STRIDE(i, n) y[i] = x[i] > T(0) ? x[i] : slope * x[i];
}

template <class T>
__global__ void leaky_backward_kernel(T* dx, const T* x, const T* dy, std::size_t n, T slope) {
  DTNN_GRID_STRIDE(i, n) dx[i] = x[i] > T(0) ? dy[i] : slope * dy[i];
}

// SplitMix64 of (seed, i): a uniform in [0, 1) per element, the same wherever it runs.
__device__ double uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * (1.0 / 9007199254740992.0);
}

template <class T>
__global__ void dropout_forward_kernel(T* y, const T* x, std::uint8_t* keep, std::size_t n,
                                       double rate, std::uint64_t seed, T inv_keep) {
  DTNN_GRID_STRIDE(i, n) {
    const bool k = uniform(seed, i) >= rate;
    keep[i] = k;
    y[i] = k ? x[i] * inv_keep : T(0);
  }
}

template <class T>
__global__ void dropout_backward_kernel(T* dx, const T* dy, const std::uint8_t* keep,
                                        std::size_t n, T inv_keep) {
  DTNN_GRID_STRIDE(i, n) dx[i] = keep[i] ? dy[i] * inv_keep : T(0);
}

template <class T>
__device__ T clamp_eps(T p) {
  const T eps = sizeof(T) == 4 ? T(1e-7) : T(1e-15);
  return p > eps ? p : eps;
}

// The sum of every thread's v in a one-block launch of kThreads threads, written to *out.
__device__ void block_sum_to(double v, double* out) {
  __shared__ double partial[kThreads];
  partial[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) *out = partial[0];
}

// p clipped to [eps, 1 - eps] (binary cross-entropy: neither log may be infinite).
template <class T>
__device__ T clamp_both(T p) {
  const T eps = sizeof(T) == 4 ? T(1e-7) : T(1e-15);
  return p < eps ? eps : p > T(1) - eps ? T(1) - eps : p;
}

// The loss terms, summed in double: categorical (-t log p over t != 0) and binary
// (-(t log p + (1 - t) log(1 - p))), with the CPU losses' clipping.
struct CategoricalTerm {
  template <class T>
  __device__ double operator()(T p, T t) const {
    return t != T(0) ? -double(t) * log(double(clamp_eps(p))) : 0.0;
  }
};
struct BinaryTerm {
  template <class T>
  __device__ double operator()(T p, T t) const {
    const double q = double(clamp_both(p)), u = double(t);
    return -(u * log(q) + (1.0 - u) * log(1.0 - q));
  }
};

// One block: each thread sums its stride of term(p, t), then a shared-memory tree.
template <class Term, class T>
__global__ void loss_sum_kernel(Term term, double* out, const T* p, const T* t, std::size_t n) {
  double sum = 0;
  for (std::size_t i = threadIdx.x; i < n; i += blockDim.x) sum += term(p[i], t[i]);
  block_sum_to(sum, out);
}

// A thread per row: its kMaxContributions slots.
template <class T>
__global__ void metric_rows_kernel(rules::MetricRule rule, rules::Contribution* slots, const T* p,
                                   const T* t, std::int64_t rows, std::int64_t cols) {
  DTNN_GRID_STRIDE(r, std::size_t(rows)) {
    const std::size_t at = r * std::size_t(cols);
    rules::row_slots(rule, p + at, t + at, cols, slots + r * rules::kMaxContributions);
  }
}

// dL/dp = (p - t) / (N p (1 - p)), p clipped.
template <class T>
__global__ void binary_cross_entropy_gradient_kernel(T* dy, const T* p, const T* t, std::size_t n,
                                                     T inv_n) {
  DTNN_GRID_STRIDE(i, n) {
    const T q = clamp_both(p[i]);
    dy[i] = (q - t[i]) * inv_n / (q * (T(1) - q));
  }
}

template <class T>
__global__ void cross_entropy_gradient_kernel(T* dy, const T* p, const T* t, std::size_t n,
                                              T inv_rows) {
  DTNN_GRID_STRIDE(i, n) dy[i] = -t[i] * inv_rows / clamp_eps(p[i]);
}

template <class T>
__global__ void softmax_ce_gradient_kernel(T* d, const T* p, const T* t, std::size_t n,
                                           T inv_rows) {
  DTNN_GRID_STRIDE(i, n) d[i] = (p[i] - t[i]) * inv_rows;
}

template <class Rule, class T>
__global__ void rule2_kernel(Rule rule, T* w, T* g, std::size_t n) {
  DTNN_GRID_STRIDE(i, n) rule.apply(w[i], g[i]);
}
template <class Rule, class T>
__global__ void rule3_kernel(Rule rule, T* w, T* g, T* v, std::size_t n) {
  DTNN_GRID_STRIDE(i, n) rule.apply(w[i], g[i], v[i]);
}
template <class Rule, class T>
__global__ void rule4_kernel(Rule rule, T* w, T* g, T* m, T* v, std::size_t n) {
  DTNN_GRID_STRIDE(i, n) rule.apply(w[i], g[i], m[i], v[i]);
}

// S: cuDNN's type for saved statistics (float for float32 data, double for float64).
template <class T>
__global__ void batchnorm_running_kernel(T* rm, T* rv, const T* mean, const T* inv_std,
                                         std::int64_t c, double momentum, double epsilon) {
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= c) return;
  const double is = double(inv_std[k]);
  const double var = 1.0 / (is * is) - epsilon;
  rm[k] = T(momentum * double(rm[k]) + (1 - momentum) * double(mean[k]));
  rv[k] = T(momentum * double(rv[k]) + (1 - momentum) * (var > 0 ? var : 0.0));
}

}  // namespace

void scale(cudaStream_t s, void* y, const void* x, std::size_t n, DType dtype, double alpha) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    scale_kernel<<<blocks(n), kThreads, 0, s>>>(static_cast<T*>(y), static_cast<const T*>(x), n,
                                                T(alpha));
  });
  check_launch();
}

void add_bias_rows(cudaStream_t s, void* y, const void* b, std::int64_t rows, std::int64_t cols,
                   DType dtype) {
  const std::size_t n = std::size_t(rows) * std::size_t(cols);
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    add_bias_rows_kernel<<<blocks(n), kThreads, 0, s>>>(static_cast<T*>(y),
                                                        static_cast<const T*>(b), n, cols);
  });
  check_launch();
}

void add_column_sums(cudaStream_t s, void* db, const void* dy, std::int64_t rows,
                     std::int64_t cols, DType dtype) {
  if (cols == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    add_column_sums_kernel<<<unsigned((cols + kThreads - 1) / kThreads), kThreads, 0, s>>>(
        static_cast<T*>(db), static_cast<const T*>(dy), rows, cols);
  });
  check_launch();
}

void leaky_relu_forward(cudaStream_t s, void* y, const void* x, std::size_t n, DType dtype,
                        double slope) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    leaky_forward_kernel<<<blocks(n), kThreads, 0, s>>>(static_cast<T*>(y),
                                                        static_cast<const T*>(x), n, T(slope));
  });
  check_launch();
}

void leaky_relu_backward(cudaStream_t s, void* dx, const void* x, const void* dy, std::size_t n,
                         DType dtype, double slope) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    leaky_backward_kernel<<<blocks(n), kThreads, 0, s>>>(
        static_cast<T*>(dx), static_cast<const T*>(x), static_cast<const T*>(dy), n, T(slope));
  });
  check_launch();
}

void dropout_forward(cudaStream_t s, void* y, const void* x, std::uint8_t* keep, std::size_t n,
                     DType dtype, double rate, std::uint64_t seed) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    dropout_forward_kernel<<<blocks(n), kThreads, 0, s>>>(static_cast<T*>(y),
                                                          static_cast<const T*>(x), keep, n, rate,
                                                          seed, T(1.0 / (1.0 - rate)));
  });
  check_launch();
}

void dropout_backward(cudaStream_t s, void* dx, const void* dy, const std::uint8_t* keep,
                      std::size_t n, DType dtype, double rate) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    dropout_backward_kernel<<<blocks(n), kThreads, 0, s>>>(
        static_cast<T*>(dx), static_cast<const T*>(dy), keep, n, T(1.0 / (1.0 - rate)));
  });
  check_launch();
}

void cross_entropy_sum(cudaStream_t s, double* sum, const void* p, const void* t, std::size_t n,
                       DType dtype) {
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    loss_sum_kernel<<<1, kThreads, 0, s>>>(CategoricalTerm{}, sum, static_cast<const T*>(p),
                                           static_cast<const T*>(t), n);
  });
  check_launch();
}

void binary_cross_entropy_sum(cudaStream_t s, double* sum, const void* p, const void* t,
                              std::size_t n, DType dtype) {
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    loss_sum_kernel<<<1, kThreads, 0, s>>>(BinaryTerm{}, sum, static_cast<const T*>(p),
                                           static_cast<const T*>(t), n);
  });
  check_launch();
}

void metric_rows(cudaStream_t s, rules::Contribution* slots, const void* p, const void* t,
                 std::int64_t rows, std::int64_t cols, DType dtype, const rules::MetricRule& rule) {
  if (rows == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    metric_rows_kernel<<<blocks(std::size_t(rows)), kThreads, 0, s>>>(
        rule, slots, static_cast<const T*>(p), static_cast<const T*>(t), rows, cols);
  });
  check_launch();
}

void binary_cross_entropy_gradient(cudaStream_t s, void* dy, const void* p, const void* t,
                                   std::size_t n, DType dtype) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    binary_cross_entropy_gradient_kernel<<<blocks(n), kThreads, 0, s>>>(
        static_cast<T*>(dy), static_cast<const T*>(p), static_cast<const T*>(t), n,
        T(1.0 / double(n)));
  });
  check_launch();
}

void cross_entropy_gradient(cudaStream_t s, void* dy, const void* p, const void* t,
                            std::size_t n, DType dtype, std::int64_t rows) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    cross_entropy_gradient_kernel<<<blocks(n), kThreads, 0, s>>>(
        static_cast<T*>(dy), static_cast<const T*>(p), static_cast<const T*>(t), n,
        T(1.0 / double(rows)));
  });
  check_launch();
}

void softmax_cross_entropy_gradient(cudaStream_t s, void* d, const void* p, const void* t,
                                    std::size_t n, DType dtype, std::int64_t rows) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    softmax_ce_gradient_kernel<<<blocks(n), kThreads, 0, s>>>(
        static_cast<T*>(d), static_cast<const T*>(p), static_cast<const T*>(t), n,
        T(1.0 / double(rows)));
  });
  check_launch();
}

void sgd_update(cudaStream_t s, void* w, void* g, void* v, std::size_t n, DType dtype,
                const SgdArgs& a) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    T *wp = static_cast<T*>(w), *gp = static_cast<T*>(g), *vp = static_cast<T*>(v);
    const T lr = T(a.lr), mu = T(a.momentum), decay = T(a.decay);
    if (!vp)
      rule2_kernel<<<blocks(n), kThreads, 0, s>>>(rules::Sgd<T>{lr, decay}, wp, gp, n);
    else if (a.pydtnn)
      rule3_kernel<<<blocks(n), kThreads, 0, s>>>(
          rules::PydtnnSgdMomentum<T>{lr, mu, decay, a.nesterov}, wp, gp, vp, n);
    else
      rule3_kernel<<<blocks(n), kThreads, 0, s>>>(
          rules::SgdMomentum<T>{lr, mu, decay, a.nesterov}, wp, gp, vp, n);
  });
  check_launch();
}

void adam_update(cudaStream_t s, void* w, void* g, void* m, void* v, std::size_t n, DType dtype,
                 const AdamArgs& a) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    T *wp = static_cast<T*>(w), *gp = static_cast<T*>(g), *mp = static_cast<T*>(m),
      *vp = static_cast<T*>(v);
    if (a.pydtnn)
      rule4_kernel<<<blocks(n), kThreads, 0, s>>>(
          rules::PydtnnAdam<T>::from(a.b1, a.b2, a.eps, a.decay, a.lr, a.c1, a.c2), wp, gp, mp,
          vp, n);
    else
      rule4_kernel<<<blocks(n), kThreads, 0, s>>>(
          rules::Adam<T>::from(a.b1, a.b2, a.eps, a.decay, a.lr, a.c1, a.c2), wp, gp, mp, vp, n);
  });
  check_launch();
}

void rmsprop_update(cudaStream_t s, void* w, void* g, void* square, std::size_t n, DType dtype,
                    const RmsPropArgs& a) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    T *wp = static_cast<T*>(w), *gp = static_cast<T*>(g), *sp = static_cast<T*>(square);
    const T lr = T(a.lr), rho = T(a.rho), eps = T(a.eps), decay = T(a.decay);
    if (a.pydtnn)
      rule3_kernel<<<blocks(n), kThreads, 0, s>>>(rules::PydtnnRmsProp<T>{lr, rho, eps, decay}, wp,
                                                  gp, sp, n);
    else
      rule3_kernel<<<blocks(n), kThreads, 0, s>>>(rules::RmsProp<T>{lr, rho, eps, decay}, wp, gp,
                                                  sp, n);
  });
  check_launch();
}

void nadam_update(cudaStream_t s, void* w, void* g, void* m, void* v, std::size_t n, DType dtype,
                  const NadamArgs& a) {
  if (n == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    T *wp = static_cast<T*>(w), *gp = static_cast<T*>(g), *mp = static_cast<T*>(m),
      *vp = static_cast<T*>(v);
    const T b1 = T(a.b1), b2 = T(a.b2), eps = T(a.eps), decay = T(a.decay);
    if (a.pydtnn)
      rule4_kernel<<<blocks(n), kThreads, 0, s>>>(
          rules::PydtnnNadam<T>{b1, b2, eps, decay, T(a.lr), T(a.inv_c1), T(a.inv_c2)}, wp, gp,
          mp, vp, n);
    else
      rule4_kernel<<<blocks(n), kThreads, 0, s>>>(
          rules::Nadam<T>{b1, b2, eps, decay, T(a.inv_c2), T(a.grad_coef), T(a.moment_coef)}, wp,
          gp, mp, vp, n);
  });
  check_launch();
}

void batchnorm_running_update(cudaStream_t s, void* running_mean, void* running_var,
                              const void* save_mean, const void* save_inv_std, std::int64_t c,
                              DType dtype, double momentum, double epsilon) {
  if (c == 0) return;
  by_dtype(dtype, [&](auto z) {
    using T = decltype(z);
    batchnorm_running_kernel<<<unsigned((c + kThreads - 1) / kThreads), kThreads, 0, s>>>(
        static_cast<T*>(running_mean), static_cast<T*>(running_var),
        static_cast<const T*>(save_mean), static_cast<const T*>(save_inv_std), c, momentum,
        epsilon);
  });
  check_launch();
}

}  // namespace dtnn::cuda::kernels
