// cuda_categorical_cross_entropy: the CPU loss's formulas on the GPU (see
// plugins/losses/categorical_cross_entropy): the loss is summed on the device in double and read
// back (one 8-byte copy per batch); the gradients never leave the device.
#include "cuda_plugin.hpp"
#include "device_sum.hpp"
#include "dtnn/loss.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaCategoricalCrossEntropy final : public Loss {
 public:
  std::string name() const override { return "categorical_cross_entropy"; }
  bool has_softmax_gradient() const override { return true; }

  double forward(const Tensor& p, const Tensor& t) override {
    kernels::cross_entropy_sum(Context::get().stream(), sum_.get(), p.raw(), t.raw(),
                               std::size_t(p.numel()), p.dtype());
    return sum_.read() / static_cast<double>(p.dim(0));
  }
  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    kernels::cross_entropy_gradient(Context::get().stream(), dy.raw(), p.raw(), t.raw(),
                                    std::size_t(p.numel()), p.dtype(), p.dim(0));
  }
  void backward_through_softmax(const Tensor& p, const Tensor& t, Tensor& dlogits) override {
    kernels::softmax_cross_entropy_gradient(Context::get().stream(), dlogits.raw(), p.raw(),
                                            t.raw(), std::size_t(p.numel()), p.dtype(), p.dim(0));
  }

 private:
  DeviceSum sum_;
};

Plugin* create(const Params&, const PluginContext&) { return new CudaCategoricalCrossEntropy(); }

}  // namespace

DTNN_CUDA_PLUGIN("loss", "cuda_categorical_cross_entropy",
                 "cross-entropy against one-hot targets on an NVIDIA GPU; exact gradient through "
                 "softmax",
                 "{}", create)
