// cuda_dropout: inverted dropout on the GPU. Training: y = x keep / (1 - rate), keep ~
// Bernoulli(1 - rate) per element from a counter-based hash of (seed, step, element); evaluation:
// y = x. As the CPU layer, a new mask is drawn by the first training forward after a backward, so
// forwards within a step see the same mask, and the mask's step is the layer's state (host float64
// [step, stepped], the CPU layer's, carried by checkpoints across devices). The masks differ from
// the CPU layer's (another generator); their statistics do not.
#include <cuda_runtime_api.h>

#include "check.hpp"
#include "cuda_plugin.hpp"
#include "dropout_base.hpp"
#include "dtnn/rng.hpp"
#include "launch.cuh"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// SplitMix64 of (seed, i): a uniform in [0, 1) per element, the same wherever it runs.
__device__ double uniform(std::uint64_t seed, std::uint64_t i) {
  std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  return double(z >> 11) * (1.0 / 9007199254740992.0);
}

// keep[i] = 1 with probability 1 - rate; y = x keep / (1 - rate).
template <class T>
__global__ void forward_kernel(T* y, const T* x, std::uint8_t* keep, std::size_t n, double rate,
                               std::uint64_t seed, T inv_keep) {
  DTNN_GRID_STRIDE(i, n) {
    const bool k = uniform(seed, i) >= rate;
    keep[i] = k;
    y[i] = k ? x[i] * inv_keep : T(0);
  }
}

// dx = dy keep / (1 - rate).
template <class T>
__global__ void backward_kernel(T* dx, const T* dy, const std::uint8_t* keep, std::size_t n,
                                T inv_keep) {
  DTNN_GRID_STRIDE(i, n) dx[i] = keep[i] ? dy[i] * inv_keep : T(0);
}

class CudaDropout final : public layer_parameters::DropoutBase {
 public:
  using DropoutBase::DropoutBase;
  void build(const LayerBuildContext& ctx) override {
    build_state(ctx);
    dtype_ = ctx.dtype;
    keep_ = Context::get().allocate(static_cast<std::size_t>(shape_.numel() * ctx.max_batch));
  }
  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    Context& cx = Context::get();
    if (mode == Mode::eval || rate_ == 0.0) {
      if (y.raw() != x.raw())
        DTNN_CUDA(
            cudaMemcpyAsync(y.raw(), x.raw(), x.bytes(), cudaMemcpyDeviceToDevice, cx.stream()));
      return;
    }
    const std::uint64_t stream = mask_stream();
    const auto n = std::size_t(x.numel());
    if (n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      forward_kernel<<<blocks(n), kThreads, 0, cx.stream()>>>(
          static_cast<T*>(y.raw()), static_cast<const T*>(x.raw()), mask(), n, rate_, stream,
          T(1.0 / (1.0 - rate_)));
    });
    check_launch();
  }
  void backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor* dx) override {
    mask_used();
    if (!dx) return;
    const auto n = std::size_t(dy.numel());
    if (n == 0) return;
    if (rate_ == 0.0) {  // forward drew no mask
      if (dx->raw() != dy.raw())
        DTNN_CUDA(cudaMemcpyAsync(dx->raw(), dy.raw(), dy.bytes(), cudaMemcpyDeviceToDevice,
                                  Context::get().stream()));
      return;
    }
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      backward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dx->raw()), static_cast<const T*>(dy.raw()), mask(), n,
          T(1.0 / (1.0 - rate_)));
    });
    check_launch();
  }

 private:
  std::uint8_t* mask() const { return reinterpret_cast<std::uint8_t*>(keep_.get()); }
  DType dtype_ = DType::float32;
  std::shared_ptr<std::byte> keep_;  // one byte per element of the largest batch
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaDropout(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"rate": 0.0}, "input_nchw": [8]}]})";

DTNN_CUDA_LAYER("dropout",
                "inverted dropout on an NVIDIA GPU: zeroes a fraction 'rate' of values in training",
                dtnn::layer_parameters::kDropoutParameters, kTwinChecks, create)
