// A layer for a "cuda" model in tests without a GPU (with the host-backed test runtime, device
// memory is host memory): cuda_test_weights, y = w * x elementwise, w on the model's device.
// It gives GradientExchange a model whose parameters live on a device.
#include "dtnn/layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
using namespace dtnn;
class DeviceWeights final : public Layer {
 public:
  std::string type() const override { return "test_weights"; }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    w_ = Tensor::zeros(shape_, ctx.dtype, ctx.layout, ctx.device);
    dw_ = Tensor::zeros(shape_, ctx.dtype, ctx.layout, ctx.device);
  }
  Shape output_shape() const override { return shape_; }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    const std::int64_t n = w_.numel();
    for (std::int64_t i = 0; i < x.numel(); ++i)
      y.data<double>()[i] = w_.data<double>()[i % n] * x.data<double>()[i];
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    const std::int64_t n = w_.numel();
    for (std::int64_t i = 0; i < dy.numel(); ++i) {
      dw_.data<double>()[i % n] += dy.data<double>()[i] * x.data<double>()[i];
      if (dx) dx->data<double>()[i] = w_.data<double>()[i % n] * dy.data<double>()[i];
    }
  }
  std::vector<Parameter> parameters() override { return {{"weights", w_, dw_}}; }

 private:
  Shape shape_;
  Tensor w_, dw_;
};
Plugin* create(const Params&, const PluginContext&) { return new DeviceWeights(); }
}  // namespace

DTNN_PLUGIN("layer", "cuda_test_weights", "test double: y = w * x on a host-backed device", "{}",
            create)
