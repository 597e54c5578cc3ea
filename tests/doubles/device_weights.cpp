// test_weights, y = w * x elementwise (w drawn by glorot_uniform from the layer's seed), built as
// four layer plugins from this one source (tests/CMakeLists.txt):
//   test_weights, test_weights_skewed on the cpu;
//   test_weights on "cuda": its twin for tests without a GPU (with the host-backed test runtime
//     device memory is host memory): w lives on the model's device; GradientExchange tests use it;
//   test_weights_skewed on "cuda": a twin whose input gradient is off by 1e-3, which the
//     device-twin conformance check must catch;
//   test_weights_stale on "cuda": a twin whose forward keeps using the weights it was built with
//     (a cached copy), which the check must catch once the weights have changed.
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/plugin_api.hpp"

#ifndef DTNN_TWIN_SKEW
#define DTNN_TWIN_SKEW 0.0
#endif
#ifndef DTNN_TWIN_STALE
#define DTNN_TWIN_STALE 0
#endif

namespace {
using namespace dtnn;
class Weights final : public Layer {
 public:
  std::string type() const override { return "test_weights"; }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    Tensor w = Tensor::empty(shape_, ctx.dtype, ctx.layout);
    initialize(w, "glorot_uniform", shape_.numel(), shape_.numel(), ctx.seed);
    w_ = w.to(ctx.device);
    built_ = Tensor::empty(shape_, ctx.dtype, ctx.layout, ctx.device);
    built_.copy_from(w_);
    dw_ = Tensor::zeros(shape_, ctx.dtype, ctx.layout, ctx.device);
  }
  Shape output_shape() const override { return shape_; }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    const std::int64_t n = w_.numel();
    const double* w = (DTNN_TWIN_STALE ? built_ : w_).data<double>();
    for (std::int64_t i = 0; i < x.numel(); ++i)
      y.data<double>()[i] = w[i % n] * x.data<double>()[i];
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    const std::int64_t n = w_.numel();
    for (std::int64_t i = 0; i < dy.numel(); ++i) {
      dw_.data<double>()[i % n] += dy.data<double>()[i] * x.data<double>()[i];
      if (dx)
        dx->data<double>()[i] =
            (1.0 + DTNN_TWIN_SKEW) * w_.data<double>()[i % n] * dy.data<double>()[i];
    }
  }
  std::vector<Parameter> parameters() override { return {{"weights", w_, dw_}}; }

 private:
  Shape shape_;
  Tensor w_, dw_, built_;
};
Plugin* create(const Params&, const PluginContext&) { return new Weights(); }
}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = DTNN_TWIN_NAME, .device = DTNN_TWIN_DEVICE,
                   .description = "test double: y = w * x", .factory = create)
