// cuda_layer_norm: the CPU layer's normalisation over the last axis on the GPU (layer_norm.cpp
// has the formulas): a thread block per row for the row's mean and rstd (kept for backward) and
// for the input gradient; a thread per feature for gamma's and beta's gradients, summed over the
// rows in order (no atomics: the same sums every run).
#include <cmath>

#include "block_reduce.cuh"
#include "cuda_plugin.hpp"
#include "launch.cuh"
#include "layer_parameters.hpp"

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

// dgamma[i] += sum_r dy[r, i] xhat[r, i], dbeta[i] += sum_r dy[r, i].
template <class T>
__global__ void parameter_gradient_kernel(T* dgamma, T* dbeta, const T* x, const T* dy,
                                          const T* stats, std::int64_t rows, std::int64_t d) {
  DTNN_GRID_STRIDE(i, std::size_t(d)) {
    T g = 0, b = 0;
    for (std::int64_t r = 0; r < rows; ++r) {
      const T v = dy[r * d + std::int64_t(i)];
      g += v * (x[r * d + std::int64_t(i)] - stats[2 * r]) * stats[2 * r + 1];
      b += v;
    }
    dgamma[i] += g;
    dbeta[i] += b;
  }
}

class CudaLayerNorm final : public Layer {
 public:
  explicit CudaLayerNorm(const Params& p) : epsilon_(p.get_double("epsilon")) {
    if (!(epsilon_ > 0)) p.fail("epsilon", "a positive number");
  }
  std::string type() const override { return "layer_norm"; }
  Shape output_shape() const override { return shape_; }
  std::string weights_shape() const override { return gamma_.value.shape().str(); }

  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    dtype_ = ctx.dtype;
    width_ = shape_[shape_.rank() - 1];
    rows_ = shape_.numel() / width_;
    Tensor ones = Tensor::empty(Shape{width_}, dtype_, Layout::nchw);
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      std::fill_n(ones.data<T>(), width_, T(1));
    });
    auto zeros = [&] { return Tensor::zeros(Shape{width_}, dtype_, Layout::nchw, Device::cuda); };
    gamma_ = {"gamma", ones.to(Device::cuda), zeros()};
    beta_ = {"beta", zeros(), zeros()};
    stats_ = Tensor::empty(Shape{ctx.max_batch * rows_, 2}, dtype_, Layout::nchw, Device::cuda);
  }
  std::vector<Parameter> parameters() override { return {gamma_, beta_}; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    const std::int64_t rows = x.dim(0) * rows_;
    if (rows == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      forward_kernel<<<row_blocks(rows), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(y.raw()), static_cast<T*>(stats_.raw()), static_cast<const T*>(x.raw()),
          static_cast<const T*>(gamma_.value.raw()), static_cast<const T*>(beta_.value.raw()), rows,
          width_, T(epsilon_));
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
      parameter_gradient_kernel<<<blocks(std::size_t(width_)), kThreads, 0, s>>>(
          static_cast<T*>(gamma_.grad.raw()), static_cast<T*>(beta_.grad.raw()), xp, g, stats, rows,
          width_);
      if (dx)
        input_gradient_kernel<<<row_blocks(rows), kThreads, 0, s>>>(
            static_cast<T*>(dx->raw()), xp, g, static_cast<const T*>(gamma_.value.raw()), stats,
            rows, width_);
    });
    check_launch();
  }

 private:
  double epsilon_;
  Shape shape_;
  DType dtype_ = DType::float32;
  std::int64_t width_ = 0, rows_ = 0;  // features per position; positions per sample
  Parameter gamma_, beta_;
  Tensor stats_;  // mean, rstd per row
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaLayerNorm(p); }

}  // namespace

// The CPU layer's cases, and rows wider than a thread block.
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [4, 6]}, {"input_nchw": [7]},
    {"params": {"epsilon": 0.01}, "input_nchw": [2, 3, 5]},
    {"input_nchw": [3, 300]}]})";

DTNN_CUDA_LAYER("layer_norm",
                "layer normalisation over the last axis, with scale and shift, on an NVIDIA GPU",
                dtnn::layer_parameters::kLayerNormParameters, kTwinChecks, create)
