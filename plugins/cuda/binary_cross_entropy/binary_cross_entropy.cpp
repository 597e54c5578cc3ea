// cuda_binary_cross_entropy: the CPU loss's formulas on the GPU (see
// plugins/losses/binary_cross_entropy: the mean over all outputs, p clipped): the loss is summed
// on the device in double and read back; the gradients never leave the device.
#include "cuda_plugin.hpp"
#include "device_sum.hpp"
#include "dtnn/loss.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaBinaryCrossEntropy final : public Loss {
 public:
  std::string name() const override { return "binary_cross_entropy"; }

  double forward(const Tensor& p, const Tensor& t) override {
    kernels::binary_cross_entropy_sum(Context::get().stream(), sum_.get(), p.raw(), t.raw(),
                                      std::size_t(p.numel()), p.dtype());
    return sum_.read() / static_cast<double>(p.numel());
  }
  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    kernels::binary_cross_entropy_gradient(Context::get().stream(), dy.raw(), p.raw(), t.raw(),
                                           std::size_t(p.numel()), p.dtype());
  }

 private:
  DeviceSum sum_;
};

Plugin* create(const Params&, const PluginContext&) { return new CudaBinaryCrossEntropy(); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "cuda_binary_cross_entropy",
                 "mean binary cross-entropy of probabilities against 0/1 targets on an NVIDIA GPU",
                 "{}", create)
