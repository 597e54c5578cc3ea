// channel_scale's twin on an NVIDIA GPU (channel_scale.hpp): the same parameters and channel
// index; forward and dx a thread per element, the parameter gradients a thread per channel.
#include "channel_scale.hpp"
#include "cuda_plugin.hpp"
#include "launch.cuh"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

template <class T>
__global__ void forward_kernel(T* y, const T* x, const T* g, const T* b, std::size_t n,
                               example::ChannelIndex index) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t c = index(std::int64_t(i));
    y[i] = x[i] * g[c] + b[c];
  }
}

template <class T>
__global__ void dx_kernel(T* dx, const T* dy, const T* g, std::size_t n,
                          example::ChannelIndex index) {
  DTNN_GRID_STRIDE(i, n) dx[i] = dy[i] * g[index(std::int64_t(i))];
}

// Thread c sums channel c's elements (a reference twin: correct first, fast later).
template <class T>
__global__ void parameter_grad_kernel(T* dg, T* db, const T* x, const T* dy, std::size_t n,
                                      example::ChannelIndex index) {
  const std::int64_t c = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (c >= index.channels) return;
  double sg = 0, sb = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (index(std::int64_t(i)) == c) {
      sg += double(dy[i]) * double(x[i]);
      sb += double(dy[i]);
    }
  dg[c] += T(sg);
  db[c] += T(sb);
}

class CudaChannelScale final : public Layer {
 public:
  explicit CudaChannelScale(const Params& p)
      : gamma0_(p.get_double("gamma")), beta0_(p.get_double("beta")) {}
  std::string type() const override { return "channel_scale"; }
  Shape output_shape() const override { return shape_; }

  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    index_ = example::ChannelIndex::of(shape_, ctx.layout);
    const Shape c{index_.channels};
    Tensor g = Tensor::empty(c, ctx.dtype), b = Tensor::empty(c, ctx.dtype);
    dispatch_dtype(ctx.dtype, [&](auto z) {
      using T = decltype(z);
      for (std::int64_t k = 0; k < index_.channels; ++k) {
        g.data<T>()[k] = T(gamma0_);
        b.data<T>()[k] = T(beta0_);
      }
    });
    gamma_ = {"gamma", g.to(Device::cuda), Tensor::zeros(c, ctx.dtype, ctx.layout, Device::cuda)};
    beta_ = {"beta", b.to(Device::cuda), Tensor::zeros(c, ctx.dtype, ctx.layout, Device::cuda)};
  }
  std::vector<Parameter> parameters() override { return {gamma_, beta_}; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    const auto n = std::size_t(x.numel());
    by_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      forward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(y.raw()), static_cast<const T*>(x.raw()),
          static_cast<const T*>(gamma_.value.raw()), static_cast<const T*>(beta_.value.raw()), n,
          index_);
    });
    check_launch();
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    const auto n = std::size_t(x.numel());
    const cudaStream_t s = Context::get().stream();
    by_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      parameter_grad_kernel<<<blocks(std::size_t(index_.channels)), kThreads, 0, s>>>(
          static_cast<T*>(gamma_.grad.raw()), static_cast<T*>(beta_.grad.raw()),
          static_cast<const T*>(x.raw()), static_cast<const T*>(dy.raw()), n, index_);
      if (dx)
        dx_kernel<<<blocks(n), kThreads, 0, s>>>(
            static_cast<T*>(dx->raw()), static_cast<const T*>(dy.raw()),
            static_cast<const T*>(gamma_.value.raw()), n, index_);
    });
    check_launch();
  }

 private:
  double gamma0_, beta0_;
  Shape shape_;
  example::ChannelIndex index_;
  Parameter gamma_, beta_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaChannelScale(p); }

}  // namespace

// The cases dtnn_gpu_tests compares this twin with the CPU layer on (NCHW per-sample inputs).
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [3, 4, 5]},
    {"params": {"gamma": 0.5, "beta": 0.25}, "input_nchw": [6]}]})";

DTNN_CUDA_LAYER("channel_scale", "example out-of-tree layer on an NVIDIA GPU", example::kParameters,
                kTwinChecks, create)
