#include <cuda_runtime.h>

#include <cstdint>

#include "kernels.hpp"
#include "launch.cuh"

namespace dtnn::cuda::kernels {

namespace {

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

void add_column_sums(cudaStream_t s, void* db, const void* dy, std::int64_t rows, std::int64_t cols,
                     DType dtype) {
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

}  // namespace dtnn::cuda::kernels
