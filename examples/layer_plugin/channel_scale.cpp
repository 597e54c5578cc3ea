// channel_scale on the CPU (channel_scale.hpp): the reference a researcher starts from, plain
// loops over the elements.
#include "channel_scale.hpp"

#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class ChannelScale final : public Layer {
 public:
  explicit ChannelScale(const Params& p)
      : gamma0_(p.get_double("gamma")), beta0_(p.get_double("beta")) {}
  std::string type() const override { return "channel_scale"; }
  Shape output_shape() const override { return shape_; }

  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    index_ = example::ChannelIndex::of(shape_, ctx.layout);
    const Shape c{index_.channels};
    gamma_ = {"gamma", Tensor::empty(c, ctx.dtype), Tensor::zeros(c, ctx.dtype)};
    beta_ = {"beta", Tensor::empty(c, ctx.dtype), Tensor::zeros(c, ctx.dtype)};
    dispatch_dtype(ctx.dtype, [&](auto z) {
      using T = decltype(z);
      for (std::int64_t k = 0; k < index_.channels; ++k) {
        gamma_.value.data<T>()[k] = T(gamma0_);
        beta_.value.data<T>()[k] = T(beta0_);
      }
    });
  }
  std::vector<Parameter> parameters() override { return {gamma_, beta_}; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *xp = x.data<T>(), *g = gamma_.value.data<T>(), *b = beta_.value.data<T>();
      T* yp = y.data<T>();
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        const std::int64_t c = index_(i);
        yp[i] = xp[i] * g[c] + b[c];
      }
    });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *xp = x.data<T>(), *dyp = dy.data<T>(), *g = gamma_.value.data<T>();
      T *dg = gamma_.grad.data<T>(), *db = beta_.grad.data<T>();
      T* dxp = dx ? dx->data<T>() : nullptr;
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        const std::int64_t c = index_(i);
        dg[c] += dyp[i] * xp[i];
        db[c] += dyp[i];
        if (dxp) dxp[i] = dyp[i] * g[c];
      }
    });
  }

 private:
  double gamma0_, beta0_;
  Shape shape_;
  example::ChannelIndex index_;
  Parameter gamma_, beta_;
};

Plugin* create(const Params& p, const PluginContext&) { return new ChannelScale(p); }

}  // namespace

// Conformance (dtnn check-plugin) at images in both layouts and at flat inputs.
DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "channel_scale",
                   .description = "example out-of-tree layer: y = x * gamma[c] + beta[c]",
                   .parameters = example::kParameters, .traits = R"({"conformance": [
                       {"params": {"gamma": 0.5, "beta": 0.1}, "input": [4, 3, 5]},
                       {"params": {}, "input": [6], "batch": 3}]})",
                   .factory = create)
