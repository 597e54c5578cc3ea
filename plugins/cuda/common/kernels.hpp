// The CUDA kernels that several plugins launch on the context's compute stream (the runtime's
// scaling; fc's and conv's biases; leaky_relu's and the fused convolutions' relu), behind plain
// C++ functions that C++ plugin sources can call. A kernel that one plugin alone uses lives in
// that plugin's own .cu file. Every pointer is device memory, of `dtype`; n counts elements.
#pragma once
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "dtnn/tensor.hpp"

namespace dtnn::cuda::kernels {

// y = alpha * x (y may be x).
void scale(cudaStream_t s, void* y, const void* x, std::size_t n, DType dtype, double alpha);
// y[r, c] += b[c] for a [rows, cols] row-major y.
void add_bias_rows(cudaStream_t s, void* y, const void* b, std::int64_t rows, std::int64_t cols,
                   DType dtype);
// db[c] += sum over r of dy[r, c].
void add_column_sums(cudaStream_t s, void* db, const void* dy, std::int64_t rows, std::int64_t cols,
                     DType dtype);

// y = x > 0 ? x : slope x;  dx = dy * (x > 0 ? 1 : slope).
void leaky_relu_forward(cudaStream_t s, void* y, const void* x, std::size_t n, DType dtype,
                        double slope);
void leaky_relu_backward(cudaStream_t s, void* dx, const void* x, const void* dy, std::size_t n,
                         DType dtype, double slope);

}  // namespace dtnn::cuda::kernels
