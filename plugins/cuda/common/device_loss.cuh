// The CUDA twin of a loss written as a loss rule (dtnn/row_rule_loss.hpp): everything but the
// arithmetic's executor is the CPU plugin's own class. The rows' sums (the loss, the weights, the
// targets that are no class id) are reduced on the device in double, a thread per row, in a fixed
// order (LossTotals: the same bits every run), and read back by forward (an 8-byte-per-sum copy,
// the one wait of a training step); backward leaves the weights' sum on the device for its
// gradient kernel, so the host does not wait. A twin is one .cu file beside its loss:
//
//   #include "device_loss.cuh"
//   #include "mse.hpp"
//   DTNN_CUDA_LOSS(dtnn::losses::Mse, "mse")  // plugin "cuda_mse"
#pragma once
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <memory>
#include <utility>
#include <vector>

#include "block_reduce.cuh"
#include "check.hpp"
#include "context.hpp"
#include "cuda_plugin.hpp"
#include "dtnn/row_rule_loss.hpp"
#include "launch.cuh"

namespace dtnn::cuda {

// K sums of term(i) over i in [0, n), from a term that gives them for one i:
//   struct Term { __device__ Terms<K> operator()(std::size_t i) const; };
template <int K>
struct Terms {
  double v[K] = {};
};

inline constexpr unsigned kTotalsBlocks = 128;  // partial sums per total

// Each block sums its grid stride of term(i) into partial[block * K + k]...
template <int K, class Term>
__global__ void totals_partial_kernel(Term term, double* partial, std::size_t n) {
  double sums[K] = {};
  DTNN_GRID_STRIDE(i, n) {
    const Terms<K> t = term(i);
    for (int k = 0; k < K; ++k) sums[k] += t.v[k];
  }
  for (int k = 0; k < K; ++k) {
    const double total = block_sum(sums[k]);
    if (threadIdx.x == 0) partial[blockIdx.x * K + k] = total;
  }
}

// ... and one thread adds the blocks' sums in order: the same bits every run.
template <int K>
__global__ void totals_final_kernel(double* out, const double* partial, unsigned partials) {
  for (int k = 0; k < K; ++k) {
    double total = 0;
    for (unsigned b = 0; b < partials; ++b) total += partial[b * K + k];
    out[k] = total;
  }
}

// The device doubles those sums land in, allocated at first use; launch() leaves them on the
// device for the kernels issued after it, read() brings them to the host (waiting for them).
template <int K>
class LossTotals {
 public:
  template <class Term>
  const double* launch(const Term& term, std::size_t n) {
    Context& cx = Context::get();
    if (!block_) block_ = cx.allocate((kTotalsBlocks + 1) * K * sizeof(double));
    double* partial = totals() + K;
    const unsigned grid = std::min(blocks(n), kTotalsBlocks);
    totals_partial_kernel<K><<<grid, kThreads, 0, cx.stream()>>>(term, partial, n);
    totals_final_kernel<K><<<1, 1, 0, cx.stream()>>>(totals(), partial, grid);
    check_launch();
    return totals();
  }
  template <class Term>
  std::array<double, K> read(const Term& term, std::size_t n) {
    launch(term, n);
    std::array<double, K> host{};
    Context& cx = Context::get();
    DTNN_CUDA(
        cudaMemcpyAsync(host.data(), totals(), sizeof host, cudaMemcpyDeviceToHost, cx.stream()));
    cx.synchronize();
    return host;
  }

 private:
  double* totals() { return reinterpret_cast<double*>(block_.get()); }
  std::shared_ptr<std::byte> block_;
};

// A loss's class weights on the device, uploaded once; data() is null without weights.
class DeviceWeights {
 public:
  explicit DeviceWeights(const std::vector<double>& host) {
    if (host.empty()) return;
    Context& cx = Context::get();
    block_ = cx.allocate(host.size() * sizeof(double));
    DTNN_CUDA(cudaMemcpyAsync(block_.get(), host.data(), host.size() * sizeof(double),
                              cudaMemcpyHostToDevice, cx.stream()));
    cx.synchronize();
  }
  const double* data() const { return reinterpret_cast<const double*>(block_.get()); }

 private:
  std::shared_ptr<std::byte> block_;
};

// The rows of a batch as the rule reads them on the device.
template <class Rule, class T>
struct DeviceRows {
  Rule rule;
  const T *y, *t;
  LossRows shape;
  const double* w;
  bool with_loss;  // sum the loss too (forward), not only the weights

  __device__ rules::LossRow<T> row(std::size_t r) const {
    return shape.row(y, t, std::int64_t(r), w);
  }
  // {loss, weight, 1 for a target that is no class id} of row r.
  __device__ Terms<3> operator()(std::size_t r) const {
    const rules::LossRow<T> one = row(r);
    Terms<3> out;
    bool bad = false;
    out.v[1] = rule.weight(one, &bad);
    out.v[2] = bad ? 1.0 : 0.0;
    if (with_loss) out.v[0] = rule.loss(one);
    return out;
  }
};

// A thread per row: d's row from the weights' sum at *total (on the device).
template <bool through_softmax, class Rule, class T>
__global__ void loss_gradient_kernel(DeviceRows<Rule, T> rows, T* d, const double* total) {
  const T scale = *total > 0 ? T(1.0 / *total) : T(0);
  DTNN_GRID_STRIDE(r, std::size_t(rows.shape.rows)) {
    T* out = d + r * std::size_t(rows.shape.m);
    if constexpr (through_softmax)
      rows.rule.softmax_gradient(rows.row(r), scale, out);
    else
      rows.rule.gradient(rows.row(r), scale, out);
  }
}

template <class HostLoss>
class LossOnGpu final : public HostLoss {
 public:
  using Rule = typename HostLoss::Rule;
  explicit LossOnGpu(const Params& p) : HostLoss(p), weights_(this->class_weights()) {}

  double forward(const Tensor& y, const Tensor& t) override {
    const LossRows s = shape(y, t);
    if (s.rows == 0) return 0.0;
    const std::array<double, 3> totals = by_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      return totals_.read(rows_of<T>(y, t, s, true), std::size_t(s.rows));
    });
    if (totals[2] > 0) throw_bad_class_id(y, t, this->who(), ignored_id(this->rule()));
    return totals[1] > 0 ? totals[0] / totals[1] : 0.0;
  }
  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    gradient<false>(y, t, dy);
  }
  void backward_through_softmax(const Tensor& p, const Tensor& t, Tensor& dlogits) override {
    if constexpr (Rule::kSoftmaxGradient)
      gradient<true>(p, t, dlogits);
    else
      HostLoss::backward_through_softmax(p, t, dlogits);
  }

 private:
  LossRows shape(const Tensor& y, const Tensor& t) const {
    return loss_rows_of<Rule>(y, t, this->who(), this->class_weights());
  }
  template <class T>
  DeviceRows<Rule, T> rows_of(const Tensor& y, const Tensor& t, const LossRows& s,
                              bool with_loss) const {
    return {this->rule(),
            static_cast<const T*>(y.raw()),
            static_cast<const T*>(t.raw()),
            s,
            weights_.data(),
            with_loss};
  }
  template <bool through_softmax>
  void gradient(const Tensor& y, const Tensor& t, Tensor& d) {
    const LossRows s = shape(y, t);
    if (s.rows == 0) return;
    by_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const DeviceRows<Rule, T> rows = rows_of<T>(y, t, s, false);
      const double* total = totals_.launch(rows, std::size_t(s.rows)) + 1;
      loss_gradient_kernel<through_softmax>
          <<<blocks(std::size_t(s.rows)), kThreads, 0, Context::get().stream()>>>(
              rows, static_cast<T*>(d.raw()), total);
      check_launch();
    });
  }

  DeviceWeights weights_;
  LossTotals<3> totals_;
};

}  // namespace dtnn::cuda

// The CUDA twin of loss Class (its kParameters and kTraits, so that both declare the same).
#define DTNN_CUDA_LOSS(Class, Name)                                                  \
  namespace {                                                                        \
  ::dtnn::Plugin* create(const ::dtnn::Params& p, const ::dtnn::PluginContext&) {    \
    return new ::dtnn::cuda::LossOnGpu<Class>(p);                                    \
  }                                                                                  \
  }                                                                                  \
  DTNN_EXPORT_PLUGIN(.kind = "loss", .name = Name, .device = "cuda",                 \
                     .description = Name " computed on an NVIDIA GPU (as " Name ")", \
                     .parameters = Class::kParameters, .traits = Class::kTraits,     \
                     .probe = ::dtnn::cuda::probe, .factory = create)
