// cuda_layer_norm: the CPU layer's normalisation over the last axis on the GPU (layer_norm.cpp
// has the formulas): a thread block per row for the row's mean and rstd (kept for backward) and
// for the input gradient; gamma's and beta's gradients summed over the rows by chunks, then the
// chunks (a fixed order of addition, no atomics: the same sums every run).
#include <cmath>

#include "block_reduce.cuh"
#include "cuda_plugin.hpp"
#include "launch.cuh"
#include "layer_norm_base.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

template <class T>
__global__ void forward_kernel(T* y, T* stats, const T* x, const T* gamma, const T* beta,
                               std::int64_t rows, std::int64_t d, T epsilon) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * d;
    T sum = 0;
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) sum += xr[i];
    const T mean = block_sum(sum) / T(d);
    T squares = 0;
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x)
      squares += (xr[i] - mean) * (xr[i] - mean);
    const T rstd = T(1) / sqrt(block_sum(squares) / T(d) + epsilon);
    if (threadIdx.x == 0) {
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
    }
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x)
      y[r * d + i] = (xr[i] - mean) * rstd * gamma[i] + beta[i];
  }
}

// dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dy gamma.
template <class T>
__global__ void input_gradient_kernel(T* dx, const T* x, const T* dy, const T* gamma,
                                      const T* stats, std::int64_t rows, std::int64_t d) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T mean = stats[2 * r], rstd = stats[2 * r + 1];
    const T *xr = x + r * d, *gr = dy + r * d;
    T sum_g = 0, sum_gx = 0;
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x) {
      const T g = gr[i] * gamma[i];
      sum_g += g;
      sum_gx += g * (xr[i] - mean) * rstd;
    }
    const T mean_g = block_sum(sum_g) / T(d), mean_gx = block_sum(sum_gx) / T(d);
    for (std::int64_t i = threadIdx.x; i < d; i += blockDim.x)
      dx[r * d + i] = rstd * (gr[i] * gamma[i] - mean_g - (xr[i] - mean) * rstd * mean_gx);
  }
}

// dgamma[i] += sum_r dy[r, i] xhat[r, i], dbeta[i] += sum_r dy[r, i], in two stages with a fixed
// order of addition (no atomics: the same sums every run). Stage one: a block per tile of
// kColumns features and chunk of kRowsPerChunk rows; its kRowLanes lanes of threads take every
// kRowLanes-th row of the chunk, and lane 0 adds the lanes' sums in lane order into the chunk's
// partial sums. Stage two: a thread per feature adds the chunks' partial sums in chunk order.
constexpr int kColumns = 32, kRowLanes = 8;
constexpr std::int64_t kRowsPerChunk = 64;

__host__ __device__ inline std::int64_t row_chunks(std::int64_t rows) {
  return (rows + kRowsPerChunk - 1) / kRowsPerChunk;
}

template <class T>
__global__ void parameter_partials_kernel(T* partial_g, T* partial_b, const T* x, const T* dy,
                                          const T* stats, std::int64_t rows, std::int64_t d) {
  __shared__ T lane_g[kRowLanes][kColumns], lane_b[kRowLanes][kColumns];
  const std::int64_t i = std::int64_t(blockIdx.x) * kColumns + threadIdx.x;
  for (std::int64_t chunk = blockIdx.y; chunk < row_chunks(rows); chunk += gridDim.y) {
    const std::int64_t first = chunk * kRowsPerChunk;
    const std::int64_t last = first + kRowsPerChunk < rows ? first + kRowsPerChunk : rows;
    T g = 0, b = 0;
    if (i < d)
      for (std::int64_t r = first + threadIdx.y; r < last; r += kRowLanes) {
        const T v = dy[r * d + i];
        g += v * (x[r * d + i] - stats[2 * r]) * stats[2 * r + 1];
        b += v;
      }
    lane_g[threadIdx.y][threadIdx.x] = g;
    lane_b[threadIdx.y][threadIdx.x] = b;
    __syncthreads();
    if (threadIdx.y == 0 && i < d) {
      for (int lane = 1; lane < kRowLanes; ++lane) {
        g += lane_g[lane][threadIdx.x];
        b += lane_b[lane][threadIdx.x];
      }
      partial_g[chunk * d + i] = g;
      partial_b[chunk * d + i] = b;
    }
    __syncthreads();  // the lanes' sums read before the next chunk writes them
  }
}

template <class T>
__global__ void parameter_gradient_kernel(T* dgamma, T* dbeta, const T* partial_g,
                                          const T* partial_b, std::int64_t chunks, std::int64_t d) {
  DTNN_GRID_STRIDE(i, std::size_t(d)) {
    T g = 0, b = 0;
    for (std::int64_t c = 0; c < chunks; ++c) {
      g += partial_g[c * d + std::int64_t(i)];
      b += partial_b[c * d + std::int64_t(i)];
    }
    dgamma[i] += g;
    dbeta[i] += b;
  }
}

class CudaLayerNorm final : public layer_parameters::LayerNormBase {
 public:
  using LayerNormBase::LayerNormBase;

  void build(const LayerBuildContext& ctx) override {
    build_weights(ctx, Device::cuda);
    dtype_ = ctx.dtype;
    stats_ = Tensor::empty(Shape{ctx.max_batch * rows_, 2}, dtype_, Layout::nchw, Device::cuda);
    partials_ = Tensor::empty(Shape{2, row_chunks(ctx.max_batch * rows_), width_}, dtype_,
                              Layout::nchw, Device::cuda);
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    const std::int64_t rows = x.dim(0) * rows_;
    if (rows == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      forward_kernel<<<row_blocks(rows), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(y.raw()), static_cast<T*>(stats_.raw()), static_cast<const T*>(x.raw()),
          static_cast<const T*>(gamma_.raw()), static_cast<const T*>(beta_.raw()), rows, width_,
          T(epsilon_));
    });
    check_launch();
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    const std::int64_t rows = x.dim(0) * rows_;
    if (rows == 0) return;
    cudaStream_t s = Context::get().stream();
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      const auto *xp = static_cast<const T*>(x.raw()), *g = static_cast<const T*>(dy.raw());
      const auto* stats = static_cast<const T*>(stats_.raw());
      const std::int64_t chunks = row_chunks(rows);
      T* partial_g = static_cast<T*>(partials_.raw());
      T* partial_b = partial_g + partials_.dim(1) * width_;
      const dim3 tiles(static_cast<unsigned>((width_ + kColumns - 1) / kColumns),
                       static_cast<unsigned>(chunks < 65535 ? chunks : 65535));
      parameter_partials_kernel<<<tiles, dim3(kColumns, kRowLanes), 0, s>>>(
          partial_g, partial_b, xp, g, stats, rows, width_);
      parameter_gradient_kernel<<<blocks(std::size_t(width_)), kThreads, 0, s>>>(
          static_cast<T*>(dgamma_.raw()), static_cast<T*>(dbeta_.raw()), partial_g, partial_b,
          chunks, width_);
      if (dx)
        input_gradient_kernel<<<row_blocks(rows), kThreads, 0, s>>>(
            static_cast<T*>(dx->raw()), xp, g, static_cast<const T*>(gamma_.raw()), stats, rows,
            width_);
    });
    check_launch();
  }

 private:
  DType dtype_ = DType::float32;
  Tensor stats_;     // mean, rstd per row
  Tensor partials_;  // gamma's and beta's gradients per chunk of rows (backward's first stage)
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaLayerNorm(p); }

}  // namespace

// The CPU layer's cases, rows wider than a thread block, and rows enough for several chunks
// (3 x 70 rows) and tiles of features (40).
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [4, 6]}, {"input_nchw": [7]},
    {"params": {"epsilon": 0.01}, "input_nchw": [2, 3, 5]},
    {"input_nchw": [3, 300]}, {"input_nchw": [70, 40]}]})";

DTNN_CUDA_LAYER("layer_norm",
                "layer normalisation over the last axis, with scale and shift, on an NVIDIA GPU",
                dtnn::layer_parameters::kLayerNormParameters, kTwinChecks, create)
