// cuda_gelu: the CPU layer's y = x Phi(x) on the GPU, both of its forms (gelu.cpp has the
// formulas): "none" with CUDA's erf, "tanh" with its tanh, a thread per value.
#include "cuda_plugin.hpp"
#include "gelu_parameters.hpp"
#include "launch.cuh"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

constexpr double kSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
constexpr double kInvSqrt2 = 0.7071067811865476;     // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.3989422804014327;   // 1 / sqrt(2 pi)
constexpr double kCubic = 0.044715;

template <class T>
__device__ T tanh_of(T x) {
  return tanh(T(kSqrt2OverPi) * (x + T(kCubic) * x * x * x));
}

template <bool kTanh, class T>
__global__ void forward_kernel(T* y, const T* x, std::size_t n) {
  DTNN_GRID_STRIDE(i, n) {
    const T v = x[i];
    y[i] = kTanh ? T(0.5) * v * (T(1) + tanh_of(v)) : T(0.5) * v * (T(1) + erf(v * T(kInvSqrt2)));
  }
}

template <bool kTanh, class T>
__global__ void backward_kernel(T* dx, const T* x, const T* dy, std::size_t n) {
  DTNN_GRID_STRIDE(i, n) {
    const T v = x[i];
    T slope;
    if (kTanh) {
      const T t = tanh_of(v);
      slope = T(0.5) * (T(1) + t) +
              T(0.5) * v * (T(1) - t * t) * T(kSqrt2OverPi) * (T(1) + T(3 * kCubic) * v * v);
    } else {
      slope = T(0.5) * (T(1) + erf(v * T(kInvSqrt2))) + v * exp(T(-0.5) * v * v) * T(kInvSqrt2Pi);
    }
    dx[i] = dy[i] * slope;
  }
}

class CudaGelu final : public Layer {
 public:
  explicit CudaGelu(const Params& p) : form_(p.get_string("approximate")) {
    if (form_ != "none" && form_ != "tanh") p.fail("approximate", "\"none\" or \"tanh\"");
  }
  std::string type() const override { return "gelu"; }
  Shape output_shape() const override { return shape_; }
  std::string attributes() const override { return "approximate=" + form_; }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    dtype_ = ctx.dtype;
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    const auto n = static_cast<std::size_t>(x.numel());
    if (n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      auto* out = static_cast<T*>(y.raw());
      const auto* in = static_cast<const T*>(x.raw());
      cudaStream_t s = Context::get().stream();
      if (form_ == "tanh")
        forward_kernel<true><<<blocks(n), kThreads, 0, s>>>(out, in, n);
      else
        forward_kernel<false><<<blocks(n), kThreads, 0, s>>>(out, in, n);
    });
    check_launch();
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    const auto n = static_cast<std::size_t>(x.numel());
    if (!dx || n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      auto* out = static_cast<T*>(dx->raw());
      const auto* in = static_cast<const T*>(x.raw());
      const auto* g = static_cast<const T*>(dy.raw());
      cudaStream_t s = Context::get().stream();
      if (form_ == "tanh")
        backward_kernel<true><<<blocks(n), kThreads, 0, s>>>(out, in, g, n);
      else
        backward_kernel<false><<<blocks(n), kThreads, 0, s>>>(out, in, g, n);
    });
    check_launch();
  }

 private:
  std::string form_;
  Shape shape_;
  DType dtype_ = DType::float32;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaGelu(p); }

}  // namespace

// Both forms, over [-4, 4]: the tails as well as the bend.
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [4, 5, 3], "input_range": [-4, 4]},
    {"params": {"approximate": "tanh"}, "input_nchw": [6, 5], "input_range": [-4, 4]}]})";

DTNN_CUDA_LAYER("gelu",
                "Gaussian error linear unit on an NVIDIA GPU, y = x Phi(x) (exact or tanh "
                "form)",
                dtnn::layer_parameters::kGeluParameters, kTwinChecks, create)
