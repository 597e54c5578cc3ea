// cuda_upsample2d: the CPU layer's nearest-neighbour upsampling on the GPU (NCHW): a thread per
// output value copies its pixel; backward a thread per input value sums its block of the output
// gradient in the CPU layer's order (no atomics).
#include "cuda_plugin.hpp"
#include "launch.cuh"
#include "upsample2d_base.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

template <class T>
__global__ void forward_kernel(T* y, const T* x, std::size_t n, std::int64_t h, std::int64_t w,
                               std::int64_t sh, std::int64_t sw) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t wo = w * sw, ho = h * sh;
    const std::int64_t plane = std::int64_t(i) / (ho * wo), at = std::int64_t(i) % (ho * wo);
    y[i] = x[(plane * h + (at / wo) / sh) * w + (at % wo) / sw];
  }
}

template <class T>
__global__ void backward_kernel(T* dx, const T* dy, std::size_t n, std::int64_t h, std::int64_t w,
                                std::int64_t sh, std::int64_t sw) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t wo = w * sw, ho = h * sh;
    const std::int64_t plane = std::int64_t(i) / (h * w), r = (std::int64_t(i) / w) % h,
                       c = std::int64_t(i) % w;
    T sum = 0;
    for (std::int64_t a = 0; a < sh; ++a)
      for (std::int64_t b = 0; b < sw; ++b) sum += dy[(plane * ho + r * sh + a) * wo + c * sw + b];
    dx[i] = sum;
  }
}

class CudaUpsample2d final : public layer_parameters::Upsample2dBase {
 public:
  using Upsample2dBase::Upsample2dBase;
  void build(const LayerBuildContext& ctx) override {
    build_shape(ctx);
    chw_of(ctx, "upsample2d");  // NCHW: the kernels' layout
    dtype_ = ctx.dtype;
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    const auto n = static_cast<std::size_t>(y.numel());
    if (n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      forward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(y.raw()), static_cast<const T*>(x.raw()), n, h_, w_, s_.rows, s_.columns);
    });
    check_launch();
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    const auto n = static_cast<std::size_t>(x.numel());
    if (!dx || n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      backward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dx->raw()), static_cast<const T*>(dy.raw()), n, h_, w_, s_.rows,
          s_.columns);
    });
    check_launch();
  }

 private:
  DType dtype_ = DType::float32;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaUpsample2d(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"size": 2}, "input_nchw": [2, 3, 2]},
    {"params": {"size": [3, 1]}, "input_nchw": [3, 2, 3]}]})";

DTNN_CUDA_LAYER("upsample2d", "nearest-neighbour upsampling by whole factors on an NVIDIA GPU",
                dtnn::layer_parameters::kUpsample2dParameters, kTwinChecks, create)
