// cuda_binary_cross_entropy: the CPU loss's formulas (binary_cross_entropy.cpp: the mean over all
// outputs, p clipped) on an NVIDIA GPU: the loss is summed on the device in double and read back;
// the gradients never leave the device.
#include "cuda_loss_sum.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// p clipped to [eps, 1 - eps] (1e-7 float, 1e-15 double): neither log may be infinite.
template <class T>
__device__ T clamp_both(T p) {
  const T eps = sizeof(T) == 4 ? T(1e-7) : T(1e-15);
  return p < eps ? eps : p > T(1) - eps ? T(1) - eps : p;
}

// -(t log p + (1 - t) log(1 - p)), in double.
struct Term {
  template <class T>
  __device__ double operator()(T p, T t) const {
    const double q = double(clamp_both(p)), u = double(t);
    return -(u * log(q) + (1.0 - u) * log(1.0 - q));
  }
};

// dL/dp = (p - t) / (n p (1 - p)), p clipped.
template <class T>
__global__ void gradient_kernel(T* dy, const T* p, const T* t, std::size_t n, T inv_n) {
  DTNN_GRID_STRIDE(i, n) {
    const T q = clamp_both(p[i]);
    dy[i] = (q - t[i]) * inv_n / (q * (T(1) - q));
  }
}

class CudaBinaryCrossEntropy final : public Loss {
 public:
  std::string name() const override { return "binary_cross_entropy"; }

  double forward(const Tensor& p, const Tensor& t) override {
    return sum_.sum(Term{}, p, t) / static_cast<double>(p.numel());
  }
  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    const auto n = std::size_t(p.numel());
    if (n == 0) return;
    by_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      gradient_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dy.raw()), static_cast<const T*>(p.raw()), static_cast<const T*>(t.raw()),
          n, T(1.0 / double(n)));
    });
    check_launch();
  }

 private:
  LossSum sum_;
};

Plugin* create(const Params&, const PluginContext&) { return new CudaBinaryCrossEntropy(); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "binary_cross_entropy",
                 "mean binary cross-entropy of probabilities against 0/1 targets on an NVIDIA GPU",
                 "{}", create)
