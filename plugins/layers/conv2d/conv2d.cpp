// conv2d: owns weights, biases and geometry; the arithmetic is done by the ConvAlgorithm plugin
// that the experiment's conv.algorithm (or this layer's "algorithm") names.
//   y = conv(x, w) + b;  db += sum over (n, oy, ox) of dy;  dw += conv_filter_grad(x, dy);
//   dx = conv_data_grad(dy, w)
#include <algorithm>
#include <string>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/gemm.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/log.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/registry.hpp"

namespace {

using namespace dtnn;

std::pair<std::int64_t, std::int64_t> pair_of(const Params& p, const char* key, std::int64_t min) {
  std::vector<std::int64_t> v = p.get_ints(key);
  if (v.empty() || v.size() > 2 || v[0] < min || v.back() < min)
    p.fail(key, "one or two integers >= " + std::to_string(min));
  return {v[0], v.back()};
}

class Conv2d final : public Layer {
 public:
  explicit Conv2d(const Params& p) : params_(p) {
    g_.k = p.get_int("filters");
    if (g_.k <= 0) p.fail("filters", "a positive number of filters");
    std::tie(g_.kh, g_.kw) = pair_of(p, "kernel", 1);
    std::tie(g_.stride_h, g_.stride_w) = pair_of(p, "stride", 1);
    std::tie(g_.pad_h, g_.pad_w) = pair_of(p, "padding", 0);
    std::tie(g_.dilation_h, g_.dilation_w) = pair_of(p, "dilation", 1);
    use_bias_ = p.get_bool("use_bias");
    check_initializer(p.get_string("weights_initializer"), p.key_path("weights_initializer"));
    check_initializer(p.get_string("biases_initializer"), p.key_path("biases_initializer"));
  }

  std::string type() const override { return "conv2d"; }
  Shape output_shape() const override { return g_.y_shape(1).without_batch(); }
  std::string weights_shape() const override { return w_.shape().str(); }
  std::size_t workspace_bytes() const override { return algorithm_->workspace_bytes(); }
  std::string attributes() const override {
    auto s = [](std::int64_t v) { return std::to_string(v); };
    return "padding=(" + s(g_.pad_h) + "," + s(g_.pad_w) + ") stride=(" + s(g_.stride_h) + "," +
           s(g_.stride_w) + ") dilation=(" + s(g_.dilation_h) + "," + s(g_.dilation_w) + ") " +
           algorithm_->name();
  }

  void build(const LayerBuildContext& ctx) override {
    const Shape& in = ctx.input_shape;
    if (in.rank() != 3) throw Error("conv2d expects image input (H, W, C), got " + in.str());
    g_.layout = ctx.layout;
    g_.dtype = ctx.dtype;
    g_.n = ctx.max_batch;
    g_.h = ctx.layout == Layout::nhwc ? in[0] : in[1];
    g_.w = ctx.layout == Layout::nhwc ? in[1] : in[2];
    g_.c = ctx.layout == Layout::nhwc ? in[2] : in[0];
    if (g_.ho() < 1 || g_.wo() < 1) throw Error("kernel larger than the padded input: " + g_.str());

    w_ = Tensor::empty(g_.w_shape(), ctx.dtype, ctx.layout);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype, ctx.layout);
    const std::int64_t window = g_.kh * g_.kw;
    initialize(w_, params_.get_string("weights_initializer"), g_.c * window, g_.k * window, ctx.seed);
    if (use_bias_) {
      b_ = Tensor::empty(Shape{g_.k}, ctx.dtype);
      db_ = Tensor::zeros(b_.shape(), ctx.dtype);
      initialize(b_, params_.get_string("biases_initializer"), g_.c * window, g_.k * window, ctx.seed + 1);
    }
    needs_dx_ = ctx.needs_input_gradient;
    if (use_bias_ && ctx.layout == Layout::nhwc) {  // a column of ones: the bias as GEMMs (see add_bias)
      ones_ = Tensor::empty(Shape{ctx.max_batch * g_.ho() * g_.wo()}, ctx.dtype);
      dispatch_dtype(ctx.dtype, [&](auto z) {
        using T = decltype(z);
        std::fill(ones_.data<T>(), ones_.data<T>() + ones_.numel(), T(1));
      });
    }

    // The configured algorithm, else the first of i2c and reference that computes every pass
    // this layer needs; a fallback is said once in the log and shows in the model summary.
    const std::string own = params_.get_string("algorithm");
    const std::string wanted = own.empty() ? ctx.conv_algorithm : own;
    std::string refusals;
    for (const std::string& name : {wanted, std::string("i2c"), std::string("reference")}) {
      if (algorithm_ && name == wanted) continue;
      auto candidate = ctx.registry->create_as<ConvAlgorithm>(
          "conv", name, name == wanted && own.empty() ? ctx.conv_params : Params(), {"algorithm"});
      std::string why;
      const char* failed = nullptr;
      if (!candidate->supports(g_, ConvPass::forward, why)) failed = "forward";
      else if (!candidate->supports(g_, ConvPass::backward_filter, why)) failed = "backward-filter";
      else if (needs_dx_ && !candidate->supports(g_, ConvPass::backward_data, why)) failed = "backward-data";
      if (!failed) {
        algorithm_ = candidate;
        break;
      }
      refusals += "'" + name + "' does not support " + failed + " (" + why + "); ";
    }
    if (!algorithm_) throw Error("no convolution algorithm supports " + g_.str());  // reference supports all
    if (!refusals.empty())
      log_info_once("conv2d " + g_.str() + ": " + refusals + "using '" + algorithm_->name() + "'");
    algorithm_->prepare(g_);
  }

  std::vector<Parameter> parameters() override {
    std::vector<Parameter> p{{"weights", w_, dw_}};
    if (use_bias_) p.push_back({"biases", b_, db_});
    return p;
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    algorithm_->forward(x, w_, y);
    if (use_bias_) dispatch_dtype(x.dtype(), [&](auto z) { add_bias<decltype(z)>(y); });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (use_bias_) dispatch_dtype(x.dtype(), [&](auto z) { bias_gradient<decltype(z)>(dy); });
    algorithm_->backward_filter(x, dy, dw_);
    if (dx) algorithm_->backward_data(dy, w_, *dx);
  }

 private:
  // NHWC, y as [M = n*Ho*Wo, K]:  y += ones[M, 1] b[1, K]   and   db[1, K] += ones[M]^T dy[M, K]
  // NCHW: one bias value per (n, k) plane.
  template <class T> void add_bias(Tensor& y) const {
    const T* b = b_.data<T>();
    T* yp = y.data<T>();
    const std::int64_t n = y.dim(0), pixels = g_.ho() * g_.wo(), k = g_.k;
    if (g_.layout == Layout::nhwc) {
      gemm(false, false, n * pixels, k, 1, T(1), ones_.data<T>(), 1, b, k, T(1), yp, k);
    } else {
      parallel_for(n * k, 64, [&](std::int64_t plane) {
        const T v = b[plane % k];
        for (std::int64_t i = 0; i < pixels; ++i) yp[plane * pixels + i] += v;
      });
    }
  }

  template <class T> void bias_gradient(const Tensor& dy) {
    T* db = db_.data<T>();
    const T* d = dy.data<T>();
    const std::int64_t n = dy.dim(0), pixels = g_.ho() * g_.wo(), k = g_.k;
    if (g_.layout == Layout::nhwc) {
      gemm(true, false, 1, k, n * pixels, T(1), ones_.data<T>(), 1, d, k, T(1), db, k);
    } else {
      for (std::int64_t plane = 0; plane < n * k; ++plane) {
        T s = 0;
        for (std::int64_t i = 0; i < pixels; ++i) s += d[plane * pixels + i];
        db[plane % k] += s;
      }
    }
  }

  Params params_;
  ConvGeometry g_;
  bool use_bias_ = true, needs_dx_ = true;
  Tensor w_, dw_, b_, db_, ones_;
  std::shared_ptr<ConvAlgorithm> algorithm_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Conv2d(p); }

}  // namespace

DTNN_PLUGIN("layer", "conv2d",
            "2-D convolution; the arithmetic is done by the ConvAlgorithm plugin conv.algorithm names",
            R"({"filters": 0, "kernel": [3, 3], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1], "use_bias": true,
                "algorithm": "", "weights_initializer": "glorot_uniform", "biases_initializer": "zeros"})",
            create)
