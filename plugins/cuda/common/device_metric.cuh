// The CUDA twin of a row-rule metric (dtnn/row_rule_metric.hpp): everything but accumulate() is
// the CPU plugin's own class; accumulate() runs the same rule in a kernel where the predictions
// are, a thread per row, and only the rows' contributions (16 bytes per slot, kMaxContributions
// slots per row) come back to be folded into the totals by the host executor's own fold. So the
// totals are the CPU metric's, and ranks and checkpoints mix CPU and GPU runs. A twin is one .cu
// file beside its metric:
//
//   #include "device_metric.cuh"
//   #include "precision.hpp"
//   DTNN_CUDA_METRIC(dtnn::metrics::Precision, "precision")  // plugin "cuda_precision"
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <vector>

#include "check.hpp"
#include "cuda_plugin.hpp"
#include "dtnn/row_rule_metric.hpp"
#include "launch.cuh"

namespace dtnn::cuda {

// A thread per row: its kMaxContributions slots.
template <class Rule, class T>
__global__ void row_rule_kernel(Rule rule, rules::Contribution* slots, const T* p, const T* t,
                                std::int64_t rows, std::int64_t cols) {
  DTNN_GRID_STRIDE(r, std::size_t(rows)) {
    const std::size_t at = r * std::size_t(cols);
    rules::row_slots(rule, p + at, t + at, cols, slots + r * rules::kMaxContributions);
  }
}

template <class HostMetric>
class OnGpu final : public HostMetric {
 public:
  using HostMetric::HostMetric;
  Device device() const override { return Device::cuda; }

  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    const std::int64_t rows = y_pred.dim(0);
    if (rows == 0) return;
    const std::int64_t cols = y_pred.numel() / rows;
    check_rows_fit(this->rule().totals_reached(cols), cols, totals.size());
    Context& cx = Context::get();
    const std::size_t count = static_cast<std::size_t>(rows) * rules::kMaxContributions;
    const std::size_t bytes = count * sizeof(rules::Contribution);
    if (count > host_.size()) {  // the first (largest) batch sizes both buffers
      host_.resize(count);
      device_ = cx.allocate(bytes);
    }
    auto* slots = reinterpret_cast<rules::Contribution*>(device_.get());
    by_dtype(y_pred.dtype(), [&](auto z) {
      using T = decltype(z);
      row_rule_kernel<<<blocks(std::size_t(rows)), kThreads, 0, cx.stream()>>>(
          this->rule(), slots, static_cast<const T*>(y_pred.raw()),
          static_cast<const T*>(y_true.raw()), rows, cols);
    });
    check_launch();
    DTNN_CUDA(cudaMemcpyAsync(host_.data(), slots, bytes, cudaMemcpyDeviceToHost, cx.stream()));
    cx.synchronize();
    add_contributions(std::span(host_.data(), count), totals);
  }

 private:
  // Scratch of a const accumulate(): the slots on the device and their copy on the host.
  mutable std::vector<rules::Contribution> host_;
  mutable std::shared_ptr<std::byte> device_;
};

}  // namespace dtnn::cuda

// The CUDA twin of metric Class (its kParameters and kTraits, so that both declare the same).
#define DTNN_CUDA_METRIC(Class, Name)                                                \
  namespace {                                                                        \
  ::dtnn::Plugin* create(const ::dtnn::Params& p, const ::dtnn::PluginContext&) {    \
    return new ::dtnn::cuda::OnGpu<Class>(p);                                        \
  }                                                                                  \
  }                                                                                  \
  DTNN_EXPORT_PLUGIN(.kind = "metric", .name = Name, .device = "cuda",               \
                     .description = Name " computed on an NVIDIA GPU (as " Name ")", \
                     .parameters = Class::kParameters, .traits = Class::kTraits,     \
                     .probe = ::dtnn::cuda::probe, .factory = create)
