// cuda_categorical_cross_entropy: the CPU loss's formulas (categorical_cross_entropy.cpp: class
// weights, the probability floor eps) on an NVIDIA GPU: the loss and, with weights, its normalizer
// N = sum w_j t_ij are summed on the device in double and read back (8-byte copies); the gradients
// never leave the device.
#include "class_weights.hpp"
#include "cuda_loss_sum.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"
#include "probability_floor.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// -w_j t log max(p, eps) over t != 0, in double.
struct Term {
  const double* w;
  std::size_t classes;
  double eps;
  template <class T>
  __device__ double operator()(T p, T t, std::size_t i) const {
    const T e = T(eps);
    return t != T(0) ? -weight(w, i, classes) * double(t) * log(double(p > e ? p : e)) : 0.0;
  }
};

// w_j t: the weighted normalizer's terms.
struct WeightedTarget {
  const double* w;
  std::size_t classes;
  template <class T>
  __device__ double operator()(T, T t, std::size_t i) const {
    return weight(w, i, classes) * double(t);
  }
};

// dy = -w_j t / (N max(p, eps)), or, through softmax, d = (p - t) / N unweighted.
template <bool kThroughSoftmax, class T>
__global__ void gradient_kernel(T* dy, const T* p, const T* t, std::size_t n, const double* w,
                                std::size_t classes, T eps, T inv_n) {
  DTNN_GRID_STRIDE(i, n) {
    if (kThroughSoftmax)
      dy[i] = (p[i] - t[i]) * inv_n;
    else
      dy[i] = -T(weight(w, i, classes)) * t[i] * inv_n / (p[i] > eps ? p[i] : eps);
  }
}

// Through softmax with weights, a row per thread: d_ij = (p_ij s_i - w_j t_ij) / N,
// s_i = sum_k w_k t_ik.
template <class T>
__global__ void weighted_softmax_kernel(T* d, const T* p, const T* t, std::size_t rows,
                                        const double* w, std::size_t classes, T inv_n) {
  DTNN_GRID_STRIDE(r, rows) {
    const T* pr = p + r * classes;
    const T* tr = t + r * classes;
    T s = 0;
    for (std::size_t k = 0; k < classes; ++k) s += T(w[k]) * tr[k];
    for (std::size_t j = 0; j < classes; ++j)
      d[r * classes + j] = (pr[j] * s - T(w[j]) * tr[j]) * inv_n;
  }
}

class CudaCategoricalCrossEntropy final : public Loss {
 public:
  explicit CudaCategoricalCrossEntropy(const Params& p)
      : weights_(p, "categorical_cross_entropy"), floor_(p), device_weights_(weights_.values()) {}
  std::string name() const override { return "categorical_cross_entropy"; }
  bool has_softmax_gradient() const override { return true; }

  double forward(const Tensor& p, const Tensor& t) override {
    const std::size_t m = classes(p);
    const double n = normalizer(p, t, m);
    const double eps =
        p.dtype() == DType::float64 ? floor_.get<double>() : double(floor_.get<float>());
    return n > 0 ? sum_.sum(Term{device_weights_.data(), m, eps}, p, t) / n : 0.0;
  }
  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    gradient<false>(dy, p, t);
  }
  void backward_through_softmax(const Tensor& p, const Tensor& t, Tensor& dlogits) override {
    gradient<true>(dlogits, p, t);
  }

 private:
  std::size_t classes(const Tensor& p) const {
    const std::int64_t m = p.shape()[p.shape().rank() - 1];
    weights_.check(m);
    return std::size_t(m);
  }
  // N: the rows unweighted; the targets' total weight weighted.
  double normalizer(const Tensor& p, const Tensor& t, std::size_t m) {
    if (weights_.empty()) return double(p.dim(0));
    return total_.sum(WeightedTarget{device_weights_.data(), m}, p, t);
  }

  template <bool kThroughSoftmax>
  void gradient(Tensor& dy, const Tensor& p, const Tensor& t) {
    const auto n = std::size_t(p.numel());
    if (n == 0) return;
    const std::size_t m = classes(p);
    const double total = normalizer(p, t, m);
    by_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T inv_n = total > 0 ? T(1.0 / total) : T(0);
      const auto* pp = static_cast<const T*>(p.raw());
      const auto* tp = static_cast<const T*>(t.raw());
      auto* d = static_cast<T*>(dy.raw());
      cudaStream_t stream = Context::get().stream();
      if (kThroughSoftmax && !weights_.empty()) {
        const std::size_t rows = n / m;
        weighted_softmax_kernel<<<blocks(rows), kThreads, 0, stream>>>(
            d, pp, tp, rows, device_weights_.data(), m, inv_n);
      } else {
        gradient_kernel<kThroughSoftmax><<<blocks(n), kThreads, 0, stream>>>(
            d, pp, tp, n, device_weights_.data(), m, floor_.get<T>(), inv_n);
      }
    });
    check_launch();
  }

  losses::ClassWeights weights_;
  losses::ProbabilityFloor floor_;
  DeviceWeights device_weights_;
  LossSum sum_, total_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaCategoricalCrossEntropy(p); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "categorical_cross_entropy",
                 "cross-entropy against one-hot targets on an NVIDIA GPU, classes optionally "
                 "weighted; exact gradient through softmax",
                 R"({"weights": [], "eps": 0.0})", create)
