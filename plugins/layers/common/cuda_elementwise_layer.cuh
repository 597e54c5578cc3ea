// CudaElementwiseLayer<Op>: the CUDA twin of an ElementwiseLayer<Op> (dtnn/elementwise_layer.hpp)
// whose rule is written once for both (its functions DTNN_HOST_DEVICE, host_device.hpp): a
// thread per value runs the very rule the CPU layer runs. CUDA code: include it from .cu files.
#pragma once
#include <string>

#include "cuda_plugin.hpp"
#include "launch.cuh"

namespace dtnn::cuda {

template <class Op, class T>
__global__ void elementwise_forward_kernel(Op op, T* y, const T* x, std::size_t n) {
  DTNN_GRID_STRIDE(i, n) y[i] = op.forward(x[i]);
}

// dx = dy * f'(x)
template <class Op, class T>
__global__ void elementwise_backward_kernel(Op op, T* dx, const T* x, const T* y, const T* dy,
                                            std::size_t n) {
  DTNN_GRID_STRIDE(i, n) dx[i] = dy[i] * op.gradient(x[i], y[i]);
}

template <class Op>
class CudaElementwiseLayer final : public Layer {
 public:
  explicit CudaElementwiseLayer(Op op = Op()) : op_(op) {}
  std::string type() const override { return Op::kType; }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    dtype_ = ctx.dtype;
  }
  Shape output_shape() const override { return shape_; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    const auto n = static_cast<std::size_t>(x.numel());
    if (n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      elementwise_forward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          op_, static_cast<T*>(y.raw()), static_cast<const T*>(x.raw()), n);
    });
    check_launch();
  }
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    const auto n = static_cast<std::size_t>(x.numel());
    if (!dx || n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      elementwise_backward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          op_, static_cast<T*>(dx->raw()), static_cast<const T*>(x.raw()),
          static_cast<const T*>(y.raw()), static_cast<const T*>(dy.raw()), n);
    });
    check_launch();
  }

 private:
  Op op_;
  Shape shape_;
  DType dtype_ = DType::float32;
};

}  // namespace dtnn::cuda
