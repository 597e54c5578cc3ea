// cuda_cross_entropy: the CPU loss (cross_entropy.cpp has the formulas) on an NVIDIA GPU: a thread
// block per row takes the logits' log_softmax (the exponentials summed in double, as on the CPU)
// into a device buffer, the log-likelihood of that (cuda_log_likelihood.cuh) is the loss, and its
// gradient g goes through log_softmax in place, a block per row:  dx_rj = g_rj - p_rj sum_k g_rk.
#include <cmath>

#include "block_reduce.cuh"
#include "cuda_log_likelihood.cuh"
#include "cuda_plugin.hpp"
#include "dtnn/loss.hpp"
#include "loss_parameters.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

template <class T>
__global__ void log_softmax_kernel(T* out, const T* x, std::int64_t rows, std::int64_t m) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * m;
    T top = -INFINITY;
    for (std::int64_t j = threadIdx.x; j < m; j += blockDim.x) top = row[j] > top ? row[j] : top;
    top = block_max(top);
    double sum = 0;
    for (std::int64_t j = threadIdx.x; j < m; j += blockDim.x) sum += exp(double(row[j] - top));
    const T lse = top + T(log(block_sum(sum)));
    for (std::int64_t j = threadIdx.x; j < m; j += blockDim.x) out[r * m + j] = row[j] - lse;
  }
}

// g = dL/d(log p) in, dL/dx out: g_rj - exp(logp_rj) sum_k g_rk.
template <class T>
__global__ void through_log_softmax_kernel(T* g, const T* logp, std::int64_t rows, std::int64_t m) {
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    T* gr = g + r * m;
    T total = 0;
    for (std::int64_t j = threadIdx.x; j < m; j += blockDim.x) total += gr[j];
    total = block_sum(total);
    for (std::int64_t j = threadIdx.x; j < m; j += blockDim.x)
      gr[j] -= exp(logp[r * m + j]) * total;
  }
}

class CudaCrossEntropy final : public Loss {
 public:
  explicit CudaCrossEntropy(const Params& p) : likelihood_(p, "cross_entropy") {}
  std::string name() const override { return "cross_entropy"; }

  double forward(const Tensor& x, const Tensor& t) override {
    return likelihood_.loss(log_softmax(x, t), x, t);
  }
  void backward(const Tensor& x, const Tensor& t, Tensor& dx) override {
    const void* logp = log_softmax(x, t);
    likelihood_.gradient(logp, x, t, dx.raw());
    const std::int64_t m = likelihood_.targets(x, t).classes(), rows = x.numel() / m;
    if (rows == 0) return;
    by_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      through_log_softmax_kernel<<<row_blocks(rows), 128, 0, Context::get().stream()>>>(
          static_cast<T*>(dx.raw()), static_cast<const T*>(logp), rows, m);
    });
    check_launch();
  }

 private:
  // log_softmax(x) over each row of its classes, in the device buffer.
  const void* log_softmax(const Tensor& x, const Tensor& t) {
    const std::int64_t m = likelihood_.targets(x, t).classes(), rows = x.numel() / m;
    if (x.bytes() > capacity_) {
      capacity_ = x.bytes();
      logp_ = Context::get().allocate(capacity_);
    }
    if (rows == 0) return logp_.get();
    by_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      log_softmax_kernel<<<row_blocks(rows), 128, 0, Context::get().stream()>>>(
          reinterpret_cast<T*>(logp_.get()), static_cast<const T*>(x.raw()), rows, m);
    });
    check_launch();
    return logp_.get();
  }

  LogLikelihood likelihood_;
  std::shared_ptr<std::byte> logp_;
  std::size_t capacity_ = 0;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaCrossEntropy(p); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "cross_entropy",
                 "cross-entropy of raw scores (logits) on an NVIDIA GPU: log_softmax, then the "
                 "weighted negative log-likelihood; class ids or one-hot targets",
                 dtnn::loss_parameters::kLogLikelihoodParameters, create)
