// cuda_binary_cross_entropy: the CPU loss's formulas (binary_cross_entropy.cpp: the mean over all
// outputs, column j weighted by w_j, p clipped to [eps, 1 - eps]) on an NVIDIA GPU: the loss is
// summed on the device in double and read back; the gradients never leave the device.
#include "class_weights.hpp"
#include "cuda_loss_sum.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"
#include "probability_floor.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// p clipped to [eps, 1 - eps]: neither log may be infinite.
template <class T>
__device__ T clamp_both(T p, T eps) {
  return p < eps ? eps : p > T(1) - eps ? T(1) - eps : p;
}

// -w_j (t log p + (1 - t) log(1 - p)), in double.
struct Term {
  const double* w;
  std::size_t classes;
  double eps;
  template <class T>
  __device__ double operator()(T p, T t, std::size_t i) const {
    const double q = double(clamp_both(p, T(eps))), u = double(t);
    return -weight(w, i, classes) * (u * log(q) + (1.0 - u) * log(1.0 - q));
  }
};

// dL/dp = w_j (p - t) / (n p (1 - p)), p clipped.
template <class T>
__global__ void gradient_kernel(T* dy, const T* p, const T* t, std::size_t n, const double* w,
                                std::size_t classes, T eps, T inv_n) {
  DTNN_GRID_STRIDE(i, n) {
    const T q = clamp_both(p[i], eps);
    dy[i] = T(weight(w, i, classes)) * (q - t[i]) * inv_n / (q * (T(1) - q));
  }
}

class CudaBinaryCrossEntropy final : public Loss {
 public:
  explicit CudaBinaryCrossEntropy(const Params& p)
      : weights_(p, "binary_cross_entropy"), floor_(p), device_weights_(weights_.values()) {}
  std::string name() const override { return "binary_cross_entropy"; }

  double forward(const Tensor& p, const Tensor& t) override {
    const double eps =
        p.dtype() == DType::float64 ? floor_.get<double>() : double(floor_.get<float>());
    return sum_.sum(Term{device_weights_.data(), classes(p), eps}, p, t) /
           static_cast<double>(p.numel());
  }
  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    const auto n = std::size_t(p.numel());
    if (n == 0) return;
    const std::size_t m = classes(p);
    by_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      gradient_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dy.raw()), static_cast<const T*>(p.raw()), static_cast<const T*>(t.raw()),
          n, device_weights_.data(), m, floor_.get<T>(), T(1.0 / double(n)));
    });
    check_launch();
  }

 private:
  std::size_t classes(const Tensor& p) const {
    const std::int64_t m = p.shape()[p.shape().rank() - 1];
    weights_.check(m);
    return std::size_t(m);
  }

  losses::ClassWeights weights_;
  losses::ProbabilityFloor floor_;
  DeviceWeights device_weights_;
  LossSum sum_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaBinaryCrossEntropy(p); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "binary_cross_entropy",
                 "mean binary cross-entropy of probabilities against 0/1 targets on an NVIDIA "
                 "GPU, classes (columns) optionally weighted",
                 R"({"weights": [], "eps": 0.0})", create)
