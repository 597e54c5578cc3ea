// cuda_dice: the CPU loss's soft Dice (dice.cpp has the formulas) on an NVIDIA GPU: a thread block
// per sample sums its p t and p + t in double into [I_s, S_s] (device memory); forward adds the
// samples' Dice in order on the device and reads that one value back, backward's kernel reads the
// sums where they are.
#include <cmath>

#include "block_reduce.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"
#include "launch.cuh"
#include "loss_parameters.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// stats[2 s] = I_s = sum p t, stats[2 s + 1] = S_s = sum p + sum t + smooth.
template <class T>
__global__ void sums_kernel(double* stats, const T* p, const T* t, std::int64_t samples,
                            std::int64_t m, double smooth) {
  for (std::int64_t s = blockIdx.x; s < samples; s += gridDim.x) {
    double overlap = 0, sum = 0;
    for (std::int64_t i = s * m + threadIdx.x; i < (s + 1) * m; i += blockDim.x) {
      overlap += double(p[i]) * double(t[i]);
      sum += double(p[i]) + double(t[i]);
    }
    overlap = block_sum(overlap);
    sum = block_sum(sum);
    if (threadIdx.x == 0) {
      stats[2 * s] = overlap;
      stats[2 * s + 1] = sum + smooth;
    }
  }
}

// *loss = 1 - mean_s D_s, the samples added in order.
__global__ void loss_kernel(double* loss, const double* stats, std::int64_t samples,
                            double smooth) {
  double total = 0;
  for (std::int64_t s = 0; s < samples; ++s) {
    const double sum = stats[2 * s + 1];
    total += sum > 0 ? (2 * stats[2 * s] + smooth) / sum : 1.0;
  }
  *loss = 1.0 - total / double(samples);
}

// dL/dp_i = -(1/n) (2 t_i S_s - (2 I_s + smooth)) / S_s^2
template <class T>
__global__ void gradient_kernel(T* d, const T* t, const double* stats, std::size_t n,
                                std::int64_t samples, std::int64_t m, double smooth) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t s = std::int64_t(i) / m;
    const double overlap = stats[2 * s], sum = stats[2 * s + 1];
    const double scale = sum > 0 ? -1.0 / (double(samples) * sum * sum) : 0.0;
    d[i] = T(scale * (2 * double(t[i]) * sum - (2 * overlap + smooth)));
  }
}

class CudaDice final : public Loss {
 public:
  explicit CudaDice(const Params& p) : smooth_(p.get_double("smooth")) {
    if (!(smooth_ >= 0) || !std::isfinite(smooth_)) p.fail("smooth", "a number >= 0");
  }
  std::string name() const override { return "dice"; }

  double forward(const Tensor& y, const Tensor& t) override {
    const std::int64_t n = y.dim(0);
    if (n == 0) return 0.0;
    double* stats = sums(y, t);
    Context& cx = Context::get();
    loss_kernel<<<1, 1, 0, cx.stream()>>>(stats + 2 * n, stats, n, smooth_);
    check_launch();
    double host = 0;
    DTNN_CUDA(
        cudaMemcpyAsync(&host, stats + 2 * n, sizeof host, cudaMemcpyDeviceToHost, cx.stream()));
    cx.synchronize();
    return host;
  }

  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    const std::int64_t n = y.dim(0);
    const auto count = static_cast<std::size_t>(y.numel());
    if (n == 0 || count == 0) return;
    const double* stats = sums(y, t);
    by_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      gradient_kernel<<<blocks(count), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dy.raw()), static_cast<const T*>(t.raw()), stats, count, n, y.numel() / n,
          smooth_);
    });
    check_launch();
  }

 private:
  // The samples' [I_s, S_s] on the device (and room for the loss after them).
  double* sums(const Tensor& y, const Tensor& t) {
    const std::int64_t n = y.dim(0);
    const std::size_t bytes = std::size_t(2 * n + 1) * sizeof(double);
    if (bytes > capacity_) {
      capacity_ = bytes;
      stats_ = Context::get().allocate(bytes);
    }
    auto* stats = reinterpret_cast<double*>(stats_.get());
    by_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      sums_kernel<<<row_blocks(n), kThreads, 0, Context::get().stream()>>>(
          stats, static_cast<const T*>(y.raw()), static_cast<const T*>(t.raw()), n, y.numel() / n,
          smooth_);
    });
    check_launch();
    return stats;
  }

  double smooth_;
  std::shared_ptr<std::byte> stats_;
  std::size_t capacity_ = 0;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaDice(p); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "dice",
                 "soft Dice loss of segmentation masks on an NVIDIA GPU (1 - mean Dice per sample)",
                 dtnn::loss_parameters::kDiceParameters, create)
