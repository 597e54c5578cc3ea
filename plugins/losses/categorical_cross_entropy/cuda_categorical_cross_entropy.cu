// cuda_categorical_cross_entropy: the CPU loss's formulas (categorical_cross_entropy.cpp) on an
// NVIDIA GPU: the loss is summed on the device in double and read back (one 8-byte copy per
// batch); the gradients never leave the device.
#include "cuda_loss_sum.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// p clipped below at eps (1e-7 float, 1e-15 double), as the CPU loss does.
template <class T>
__device__ T clamp_eps(T p) {
  const T eps = sizeof(T) == 4 ? T(1e-7) : T(1e-15);
  return p > eps ? p : eps;
}

// -t log p over t != 0, in double.
struct Term {
  template <class T>
  __device__ double operator()(T p, T t) const {
    return t != T(0) ? -double(t) * log(double(clamp_eps(p))) : 0.0;
  }
};

// dy = -t / (rows max(p, eps)), or, through softmax, d = (p - t) / rows.
template <bool kThroughSoftmax, class T>
__global__ void gradient_kernel(T* dy, const T* p, const T* t, std::size_t n, T inv_rows) {
  DTNN_GRID_STRIDE(i, n) {
    dy[i] = kThroughSoftmax ? (p[i] - t[i]) * inv_rows : -t[i] * inv_rows / clamp_eps(p[i]);
  }
}

template <bool kThroughSoftmax>
void gradient(Tensor& dy, const Tensor& p, const Tensor& t) {
  const auto n = std::size_t(p.numel());
  if (n == 0) return;
  by_dtype(p.dtype(), [&](auto z) {
    using T = decltype(z);
    gradient_kernel<kThroughSoftmax><<<blocks(n), kThreads, 0, Context::get().stream()>>>(
        static_cast<T*>(dy.raw()), static_cast<const T*>(p.raw()), static_cast<const T*>(t.raw()),
        n, T(1.0 / double(p.dim(0))));
  });
  check_launch();
}

class CudaCategoricalCrossEntropy final : public Loss {
 public:
  std::string name() const override { return "categorical_cross_entropy"; }
  bool has_softmax_gradient() const override { return true; }

  double forward(const Tensor& p, const Tensor& t) override {
    return sum_.sum(Term{}, p, t) / static_cast<double>(p.dim(0));
  }
  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    gradient<false>(dy, p, t);
  }
  void backward_through_softmax(const Tensor& p, const Tensor& t, Tensor& dlogits) override {
    gradient<true>(dlogits, p, t);
  }

 private:
  LossSum sum_;
};

Plugin* create(const Params&, const PluginContext&) { return new CudaCategoricalCrossEntropy(); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "categorical_cross_entropy",
                 "cross-entropy against one-hot targets on an NVIDIA GPU; exact gradient through "
                 "softmax",
                 "{}", create)
