// The CUDA twin of a metric whose totals come from a row rule (dtnn/metric.hpp's RowRuleMetric):
// everything but accumulate() is the CPU plugin's own class; accumulate() runs the same rule in a
// kernel where the predictions are, and only the rows' contributions (16 bytes per slot, two
// slots per row) come back to be folded into the totals by the host executor's own fold. So the
// totals are the CPU metric's, and ranks and checkpoints mix CPU and GPU runs.
//
//   DTNN_CUDA_METRIC(dtnn::metrics::Precision, "precision")  // plugin "cuda_precision"
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <span>
#include <vector>

#include "check.hpp"
#include "cuda_plugin.hpp"
#include "dtnn/metric.hpp"
#include "kernels.hpp"

namespace dtnn::cuda {

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
    check_rows_fit(this->rule(), cols, totals.size());
    Context& cx = Context::get();
    const std::size_t count = static_cast<std::size_t>(rows) * rules::kMaxContributions;
    const std::size_t bytes = count * sizeof(rules::Contribution);
    if (count > host_.size()) {  // the first (largest) batch sizes both buffers
      host_.resize(count);
      device_ = cx.allocate(bytes);
    }
    auto* slots = reinterpret_cast<rules::Contribution*>(device_.get());
    kernels::metric_rows(cx.stream(), slots, y_pred.raw(), y_true.raw(), rows, cols, y_pred.dtype(),
                         this->rule());
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

#define DTNN_CUDA_METRIC(Class, Name)                                                       \
  namespace {                                                                               \
  ::dtnn::Plugin* create(const ::dtnn::Params& p, const ::dtnn::PluginContext&) {           \
    return new ::dtnn::cuda::OnGpu<Class>(p);                                               \
  }                                                                                         \
  }                                                                                         \
  DTNN_CUDA_PLUGIN("metric", "cuda_" Name, Name " computed on an NVIDIA GPU (as " Name ")", \
                   Class::kParameters, create)
