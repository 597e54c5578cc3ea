// The CUDA kernels the plugins launch on the context's compute stream, behind plain C++
// functions (kernels.cu is the only CUDA source; the plugins are C++). Every pointer is device
// memory, of `dtype` unless its type says otherwise; n counts elements.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "dtnn/metric_rules.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::cuda::kernels {

// y = alpha * x (y may be x).
void scale(cudaStream_t s, void* y, const void* x, std::size_t n, DType dtype, double alpha);
// y[r, c] += b[c] for a [rows, cols] row-major y.
void add_bias_rows(cudaStream_t s, void* y, const void* b, std::int64_t rows, std::int64_t cols,
                   DType dtype);
// db[c] += sum over r of dy[r, c].
void add_column_sums(cudaStream_t s, void* db, const void* dy, std::int64_t rows,
                     std::int64_t cols, DType dtype);

// y = x > 0 ? x : slope x;  dx = dy * (x > 0 ? 1 : slope).
void leaky_relu_forward(cudaStream_t s, void* y, const void* x, std::size_t n, DType dtype,
                        double slope);
void leaky_relu_backward(cudaStream_t s, void* dx, const void* x, const void* dy, std::size_t n,
                         DType dtype, double slope);

// Inverted dropout: keep[i] = 1 with probability 1 - rate (a counter-based hash of seed and i),
// y = x keep / (1 - rate);  dx = dy keep / (1 - rate).
void dropout_forward(cudaStream_t s, void* y, const void* x, std::uint8_t* keep, std::size_t n,
                     DType dtype, double rate, std::uint64_t seed);
void dropout_backward(cudaStream_t s, void* dx, const void* dy, const std::uint8_t* keep,
                      std::size_t n, DType dtype, double rate);

// *sum = -sum over i with t_i != 0 of t_i log(max(p_i, eps)) (eps 1e-7 float, 1e-15 double),
// accumulated in double. sum is device memory, overwritten.
void cross_entropy_sum(cudaStream_t s, double* sum, const void* p, const void* t, std::size_t n,
                       DType dtype);
// dy = -t / (rows max(p, eps));  through softmax: d = (p - t) / rows.
void cross_entropy_gradient(cudaStream_t s, void* dy, const void* p, const void* t,
                            std::size_t n, DType dtype, std::int64_t rows);
void softmax_cross_entropy_gradient(cudaStream_t s, void* d, const void* p, const void* t,
                                    std::size_t n, DType dtype, std::int64_t rows);

// *sum = -sum over i of t_i log p_i + (1 - t_i) log(1 - p_i), p clipped to [eps, 1 - eps];
// dy = (p - t) / (n p (1 - p)) (binary cross-entropy, the mean over all n outputs).
void binary_cross_entropy_sum(cudaStream_t s, double* sum, const void* p, const void* t,
                              std::size_t n, DType dtype);
void binary_cross_entropy_gradient(cudaStream_t s, void* dy, const void* p, const void* t,
                                   std::size_t n, DType dtype);
// The metric rule's contributions of each row of the row-major [rows, cols] p and t
// (dtnn/metric_rules.hpp): kMaxContributions slots per row written to slots, in row order.
void metric_rows(cudaStream_t s, rules::Contribution* slots, const void* p, const void* t,
                 std::int64_t rows, std::int64_t cols, DType dtype, const rules::MetricRule& rule);
// Optimizer updates with the rules of dtnn/update_rules.hpp. v, m may be null where the rule
// keeps no such state (sgd without momentum).
struct SgdArgs {
  double lr, momentum, decay;
  bool nesterov, pydtnn;
};
void sgd_update(cudaStream_t s, void* w, void* g, void* v, std::size_t n, DType dtype,
                const SgdArgs& a);
struct AdamArgs {
  double b1, b2, eps, decay, lr, c1, c2;  // c1 = 1 - b1^t, c2 = 1 - b2^t
  bool pydtnn;
};
void adam_update(cudaStream_t s, void* w, void* g, void* m, void* v, std::size_t n, DType dtype,
                 const AdamArgs& a);

struct RmsPropArgs {
  double lr, rho, eps, decay;
  bool pydtnn;
};
void rmsprop_update(cudaStream_t s, void* w, void* g, void* square, std::size_t n, DType dtype,
                    const RmsPropArgs& a);
struct NadamArgs {
  double b1, b2, eps, decay, lr;
  double inv_c1, inv_c2, grad_coef, moment_coef;  // this step's, from NadamBase
  bool pydtnn;
};
void nadam_update(cudaStream_t s, void* w, void* g, void* m, void* v, std::size_t n, DType dtype,
                  const NadamArgs& a);
// running = momentum running + (1 - momentum) batch, for the mean and the biased variance, from
// cuDNN's saved batch mean and inverse standard deviation (var = 1/inv_std^2 - epsilon).
// save_mean and save_inv_std are float for float32 and double for float64, as cuDNN keeps them.
void batchnorm_running_update(cudaStream_t s, void* running_mean, void* running_var,
                              const void* save_mean, const void* save_inv_std, std::int64_t c,
                              DType dtype, double momentum, double epsilon);

}  // namespace dtnn::cuda::kernels
