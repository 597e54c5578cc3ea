// cuda_positional_encoding: the CPU layer's y[n, t] = x[n, t] + p[t] on the GPU, with the same
// table (positional_encoding_parameters.hpp computes or initialises it on the host; it is uploaded
// once). Learned: dp += the batch's sum of dy, a thread per table entry adding the samples in
// order.
#include "cuda_plugin.hpp"
#include "launch.cuh"
#include "positional_encoding_base.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

template <class T>
__global__ void forward_kernel(T* y, const T* x, const T* p, std::size_t n, std::size_t m) {
  DTNN_GRID_STRIDE(i, n) y[i] = x[i] + p[i % m];
}

template <class T>
__global__ void table_gradient_kernel(T* dp, const T* dy, std::size_t m, std::int64_t samples) {
  DTNN_GRID_STRIDE(i, m) {
    T sum = 0;
    for (std::int64_t s = 0; s < samples; ++s) sum += dy[std::size_t(s) * m + i];
    dp[i] += sum;
  }
}

class CudaPositionalEncoding final : public layer_parameters::PositionalEncodingBase {
 public:
  using PositionalEncodingBase::PositionalEncodingBase;
  void build(const LayerBuildContext& ctx) override {
    build_table(ctx, Device::cuda);
    dtype_ = ctx.dtype;
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    const auto n = static_cast<std::size_t>(x.numel()),
               m = static_cast<std::size_t>(shape_.numel());
    if (n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      forward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(y.raw()), static_cast<const T*>(x.raw()), static_cast<const T*>(p_.raw()),
          n, m);
    });
    check_launch();
  }
  void backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (dx) dx->copy_from(dy);
    if (!s_.learned || dy.dim(0) == 0) return;
    const auto m = static_cast<std::size_t>(shape_.numel());
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      table_gradient_kernel<<<blocks(m), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dp_.raw()), static_cast<const T*>(dy.raw()), m, dy.dim(0));
    });
    check_launch();
  }

 private:
  DType dtype_ = DType::float32;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaPositionalEncoding(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"kind": "sinusoidal"}, "input_nchw": [5, 6]},
    {"params": {"kind": "learned"}, "input_nchw": [4, 3]}]})";

DTNN_CUDA_LAYER("positional_encoding",
                "adds a position's vector to each position on an NVIDIA GPU: sinusoidal or learned",
                dtnn::layer_parameters::kPositionalEncodingParameters, kTwinChecks, create)
