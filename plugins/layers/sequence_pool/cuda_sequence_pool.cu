// cuda_sequence_pool: the CPU layer's one vector per sequence on the GPU, [N, T, D] -> [N, D]:
// the mean over the positions before each sample's padding, or the first position; a thread per
// output value (forward) and per input value (backward).
#include <memory>

#include "cuda_plugin.hpp"
#include "cuda_sequence_lengths.hpp"
#include "launch.cuh"
#include "sequence_pool_base.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

template <class T>
__global__ void forward_kernel(T* y, const T* x, std::size_t n, std::int64_t t, std::int64_t d,
                               const std::int64_t* lengths, bool mean) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t sample = std::int64_t(i) / d, j = std::int64_t(i) % d;
    const T* xs = x + sample * t * d + j;
    if (!mean) {
      y[i] = xs[0];
      continue;
    }
    const std::int64_t length = length_of(lengths, sample, t);
    T sum = xs[0];
    for (std::int64_t p = 1; p < length; ++p) sum += xs[p * d];
    y[i] = sum / T(length);
  }
}

template <class T>
__global__ void backward_kernel(T* dx, const T* dy, std::size_t n, std::int64_t t, std::int64_t d,
                                const std::int64_t* lengths, bool mean) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t sample = std::int64_t(i) / (t * d);
    const std::int64_t p = (std::int64_t(i) / d) % t, j = std::int64_t(i) % d;
    const std::int64_t length = mean ? length_of(lengths, sample, t) : 1;
    dx[i] = p < length ? dy[sample * d + j] / T(length) : T(0);
  }
}

class CudaSequencePool final : public layer_parameters::SequencePoolBase {
 public:
  using SequencePoolBase::SequencePoolBase;
  void build(const LayerBuildContext& ctx) override {
    dtype_ = ctx.dtype;
    lengths_ = std::make_unique<DeviceLengths>(build_shape(ctx), ctx.max_batch);
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    const auto n = static_cast<std::size_t>(x.dim(0) * d_);
    if (n == 0) return;
    lengths_now_ = lengths_->upload(x.dim(0), "sequence_pool");  // backward reads them too
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      forward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(y.raw()), static_cast<const T*>(x.raw()), n, t_, d_, lengths_now_,
          s_.mean);
    });
    check_launch();
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    const auto n = static_cast<std::size_t>(x.numel());
    if (!dx || n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      backward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dx->raw()), static_cast<const T*>(dy.raw()), n, t_, d_, lengths_now_,
          s_.mean);
    });
    check_launch();
  }

 private:
  DType dtype_ = DType::float32;
  std::unique_ptr<DeviceLengths> lengths_;
  const std::int64_t* lengths_now_ = nullptr;  // this batch's, uploaded by forward
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaSequencePool(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [5, 3]}, {"params": {"mode": "first"}, "input_nchw": [4, 2]},
    {"input_nchw": [5, 2], "lengths": [2, 5, 1, 3]}]})";

DTNN_CUDA_LAYER("sequence_pool",
                "one vector per sequence on an NVIDIA GPU: the mean over positions, or the first",
                dtnn::layer_parameters::kSequencePoolParameters, kTwinChecks, create)
