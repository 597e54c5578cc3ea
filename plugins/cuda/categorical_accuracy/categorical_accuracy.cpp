// cuda_categorical_accuracy: categorical_accuracy (plugins/metrics) on the GPU: the batch's
// matches are counted where the predictions are, and only the count comes back (8 bytes, not the
// batch's predictions). Totals: {correct, rows}, as the CPU metric's, so ranks and checkpoints mix.
#include "cuda_plugin.hpp"
#include "device_sum.hpp"
#include "dtnn/metric.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaCategoricalAccuracy final : public Metric {
 public:
  std::string name() const override { return "categorical_accuracy"; }
  std::size_t num_totals() const override { return 2; }
  Device device() const override { return Device::cuda; }

  void accumulate(const Tensor& p, const Tensor& t, std::span<double> totals) const override {
    const std::int64_t rows = p.dim(0);
    if (rows == 0) return;
    kernels::argmax_matches(Context::get().stream(), matches_.get(), p.raw(), t.raw(), rows,
                            p.numel() / rows, p.dtype());
    totals[0] += matches_.read();
    totals[1] += static_cast<double>(rows);
  }

  double value(std::span<const double> totals) const override { return row_mean(totals); }

 private:
  mutable DeviceSum matches_;  // accumulate() is const; the count's device memory is scratch
};

Plugin* create(const Params&, const PluginContext&) { return new CudaCategoricalAccuracy(); }

}  // namespace

DTNN_CUDA_PLUGIN("metric", "cuda_categorical_accuracy",
                 "categorical_accuracy counted on an NVIDIA GPU", "{}", create)
