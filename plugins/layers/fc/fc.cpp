// fc: fully connected layer. x: [N, in] (any per-sample shape, taken flat), w: [in, units],
// b: [units], y: [N, units] = x w + b. With "flatten": false every position of the last axis is
// a row: x [N, ..., in] -> y [N, ..., units].
#include <string>

#include "dtnn/dense.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/plugin_api.hpp"
#include "layer_parameters.hpp"
#include "pydtnn_names.hpp"

namespace {

using namespace dtnn;

class FullyConnected final : public Layer {
 public:
  explicit FullyConnected(const Params& p) : s_(p) {}

  std::string type() const override { return "fc"; }
  Shape output_shape() const override { return s_.output_shape(input_); }
  std::string weights_shape() const override { return w_.shape().str(); }
  double forward_flops(std::int64_t batch) const override {
    return 2.0 * static_cast<double>(batch * input_.numel() / in_) *
           static_cast<double>(w_.numel());
  }

  void build(const LayerBuildContext& ctx) override {
    input_ = ctx.input_shape;
    in_ = s_.features(input_);
    precision_ = ctx.precision;
    w_ = Tensor::empty(Shape{in_, s_.units}, ctx.dtype);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype);
    initialize(w_, s_.init.weights, in_, s_.units, ctx.seed);
    if (s_.use_bias) {
      b_ = Tensor::empty(Shape{s_.units}, ctx.dtype);
      db_ = Tensor::zeros(b_.shape(), ctx.dtype);
      initialize(b_, s_.init.biases, in_, s_.units, ctx.seed + 1);
    }
  }

  void pydtnn_arrays(PydtnnArrays& out, const Shape&) override {
    pydtnn_names::fc(out, parameters());
  }
  std::vector<Parameter> parameters() override {
    std::vector<Parameter> p{{"weights", w_, dw_}};
    if (s_.use_bias) p.push_back({"biases", b_, db_});
    return p;
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, y); });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) { backward_t<decltype(z)>(x, dy, dx); });
  }
  bool backward_reads_output() const override { return false; }

 private:
  template <class T>
  void forward_t(const Tensor& x, Tensor& y) {
    dense::forward(x.data<T>(), x.numel() / in_, in_, w_.data<T>(), s_.units,
                   s_.use_bias ? b_.data<T>() : nullptr, y.data<T>(), precision_);
  }

  // From y = x w + b:  dw += x^T dy,  db += sum_rows(dy),  dx = dy w^T.
  template <class T>
  void backward_t(const Tensor& x, const Tensor& dy, Tensor* dx) {
    dense::backward(x.data<T>(), dy.data<T>(), x.numel() / in_, in_, w_.data<T>(), s_.units,
                    dw_.data<T>(), s_.use_bias ? db_.data<T>() : nullptr,
                    dx ? dx->data<T>() : nullptr, precision_);
  }

  layer_parameters::Fc s_;
  Shape input_;
  std::int64_t in_ = 0;
  Precision precision_ = Precision::fp32;
  Tensor w_, dw_, b_, db_;
};

Plugin* create(const Params& p, const PluginContext&) { return new FullyConnected(p); }

}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"units": 5}, "input": [3, 2, 2]},
    {"params": {"units": 4, "use_bias": false}, "input": [6]},
    {"params": {"units": 3, "flatten": false}, "input": [4, 5]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "fc",
                   .description = "fully connected: y = x w + b, x flattened per sample",
                   .parameters = dtnn::layer_parameters::kFcParameters, .traits = kTraits,
                   .factory = create)
