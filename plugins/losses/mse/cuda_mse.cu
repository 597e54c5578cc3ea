// cuda_mse: the CPU loss's mean squared error on an NVIDIA GPU, L = (1/N) sum_i (y_i - t_i)^2
// over all N outputs of the batch, summed on the device in double (an 8-byte copy back);
// dL/dy_i = 2 (y_i - t_i) / N stays on the device.
#include "cuda_loss_sum.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

struct SquaredError {
  template <class T>
  __device__ double operator()(T y, T t, std::size_t) const {
    const double e = double(y) - double(t);
    return e * e;
  }
};

template <class T>
__global__ void gradient_kernel(T* d, const T* y, const T* t, std::size_t n, T scale) {
  DTNN_GRID_STRIDE(i, n) d[i] = (y[i] - t[i]) * scale;
}

class CudaMeanSquaredError final : public Loss {
 public:
  std::string name() const override { return "mse"; }
  double forward(const Tensor& y, const Tensor& t) override {
    return y.numel() > 0 ? sum_.sum(SquaredError{}, y, t) / static_cast<double>(y.numel()) : 0.0;
  }
  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    const auto n = static_cast<std::size_t>(y.numel());
    if (n == 0) return;
    by_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      gradient_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dy.raw()), static_cast<const T*>(y.raw()), static_cast<const T*>(t.raw()),
          n, T(2) / T(n));
    });
    check_launch();
  }

 private:
  LossSum sum_;
};

Plugin* create(const Params&, const PluginContext&) { return new CudaMeanSquaredError(); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "mse", "mean squared error over all outputs on an NVIDIA GPU", "{}",
                 create)
