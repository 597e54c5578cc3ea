// conv2d: owns weights, biases and geometry; the arithmetic is done by the ConvAlgorithm plugin
// that the experiment's conv.algorithm (or this layer's "algorithm") names.
//   y = conv(x, w) + b;  db += sum over (n, oy, ox) of dy;  dw += conv_filter_grad(x, dy);
//   dx = conv_data_grad(dy, w)
// Fused forms (PyDTNN's fusions; the model writes them from conv2d, batchnorm, relu runs):
//   "activation": "relu"   y = max(0, conv(x, w) + b); backward masks dy with y > 0 first.
//   "batchnorm": {...}     y = batchnorm(conv(x, w) + b) (then relu), the batchnorm a layer this
//                          one owns. Training runs the two in turn through an internal buffer
//                          (exact). Evaluation folds the batchnorm into the filter and bias:
//                          y = conv(x, w * a) + (b * a + d) with a, d its per-channel affine map
//                          from the running statistics: one pass instead of two, equal to the
//                          unfused result up to rounding.
// Int8 inference (dtnn/int8_product.hpp; groups 1, float32): once the product is quantised,
// evaluation runs int8_conv2d.hpp on the filter as evaluation uses it (folded when fused).
#include <algorithm>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "conv_algorithm_choice.hpp"
#include "conv_base.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/fused_relu.hpp"
#include "dtnn/int8_product.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/log.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/registry.hpp"
#include "int8_conv2d.hpp"

namespace {

using namespace dtnn;

constexpr std::int64_t kMaxPattern = 128;  // longest bias pattern of the vectorised NHWC paths

class Conv2d final : public layer_parameters::ConvBase {
 public:
  explicit Conv2d(const Params& p) : ConvBase(p, /*depthwise=*/false), params_(p) {
    if (!p.is_null("batchnorm")) {
      bn_params_ = p.get_object("batchnorm");
      if (bn_params_->has("activation") && !bn_params_->get_string("activation").empty())
        p.fail("batchnorm",
               "the batchnorm's parameters without an activation (a fused relu is "
               "the conv2d's \"activation\")");
    }
  }

  std::size_t workspace_bytes() const override { return algorithm_->workspace_bytes(); }
  std::string report() const override { return algorithm_->report(); }
  std::string attributes() const override {
    return g_.window_str() + " " + algorithm_->name() + (bn_ ? " +batchnorm" : "") +
           (relu_ ? " +relu" : "");
  }

  void build(const LayerBuildContext& ctx) override {
    build_geometry(ctx, ctx.layout);
    build_weights(ctx, Device::cpu);
    if (use_bias_ && ctx.layout == Layout::nhwc) {
      // NHWC repeats the K biases along memory: P = lcm(K, 16) values of the pattern make every
      // chunk of P values of y start at channel 0, so bias add and gradient run as flat vector
      // loops. (Wide layers with a long pattern use plain row loops, which vectorise over K
      // anyway.)
      pattern_ = std::lcm<std::int64_t>(g_.k, 16);
      if (pattern_ > kMaxPattern) pattern_ = 0;
      bias_pattern_ = Tensor::empty(Shape{std::max<std::int64_t>(pattern_, 1)}, ctx.dtype);
      bias_sums_ =
          Tensor::empty(Shape{pattern_ * 64}, DType::float64);  // per-chunk-group partial sums
    }

    algorithm_ = layer_parameters::choose_conv_algorithm(
        ctx, params_, g_, {ConvPass::forward, ConvPass::backward_filter}, ConvPass::backward_data,
        "conv2d");

    const Shape out = output_shape().with_batch(ctx.max_batch);
    if (relu_ || bn_params_) grad_ = Tensor::empty(out, ctx.dtype, ctx.layout);
    if (bn_params_) {
      bn_ = ctx.registry->create_as<Layer>("layer", "batchnorm", *bn_params_);
      LayerBuildContext c = ctx;
      c.input_shape = output_shape();
      c.seed = ctx.seed + 2;
      bn_->build(c);
      z_ = Tensor::empty(out, ctx.dtype, ctx.layout);
      relu_grad_ = relu_ ? Tensor::empty(out, ctx.dtype, ctx.layout) : Tensor();
      probe_in_ = Tensor::empty(output_shape().with_batch(2), ctx.dtype, ctx.layout);
      probe_out_ = Tensor::empty(probe_in_.shape(), ctx.dtype, ctx.layout);
      w_fold_ = Tensor::empty(w_.shape(), ctx.dtype, ctx.layout);
      b_fold_ = Tensor::empty(Shape{g_.k}, ctx.dtype);
      if (ctx.layout == Layout::nhwc && !bias_pattern_.defined()) {
        pattern_ = std::lcm<std::int64_t>(g_.k, 16);
        if (pattern_ > kMaxPattern) pattern_ = 0;
        bias_pattern_ = Tensor::empty(Shape{std::max<std::int64_t>(pattern_, 1)}, ctx.dtype);
      }
    }
    if (g_.groups == 1 && ctx.dtype == DType::float32)
      int8_.bind(
          g_.kh * g_.kw * g_.c, g_.k,
          [this] {
            if (!bn_) return int8_conv2d::weight_matrix(g_, w_.data<float>());
            fold<float>();
            return int8_conv2d::weight_matrix(g_, w_fold_.data<float>());
          },
          g_.kh);
  }
  Int8Product* int8_product() override { return int8_.k() > 0 ? &int8_ : nullptr; }

  std::vector<Parameter> parameters() override {
    std::vector<Parameter> p = ConvBase::parameters();
    if (bn_)
      for (auto& q : bn_->parameters()) p.push_back({"batchnorm." + q.name, q.value, q.grad});
    return p;
  }
  std::vector<Tensor> state() override { return bn_ ? bn_->state() : std::vector<Tensor>{}; }
  // Conv2D, then the layers it fused: the batchnorm (its own arrays), the relu.
  void pydtnn_arrays(PydtnnArrays& out, const Shape&) override {
    pydtnn_names::conv2d(out, parameters());
    if (bn_) bn_->pydtnn_arrays(out, output_shape());
    if (relu_) out.layer("Relu");
  }

  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    if (int8_.observing()) int8_.observe(x.data<float>(), x.numel());
    if (mode == Mode::eval && int8_.ready()) {
      if (bn_) fold<float>();
      const float* bias = bn_ ? b_fold_.data<float>() : use_bias_ ? b_.data<float>() : nullptr;
      int8_runner_.forward(g_, int8_, x, bias, relu_, y);
      return;
    }
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      if (bn_ && mode == Mode::train) {
        Tensor pre = z_.slice_batch(0, x.dim(0));
        algorithm_->forward(x, w_, pre);
        if (use_bias_) add_bias<T>(pre, b_);
        bn_->forward(pre, y, mode);
      } else if (bn_) {
        fold<T>();
        algorithm_->forward(x, w_fold_, y);
        add_bias<T>(y, b_fold_);
      } else {
        algorithm_->forward(x, w_, y);
        if (use_bias_) add_bias<T>(y, b_);
      }
      if (relu_) relu_in_place<T>(y);
    });
  }

  // The fused relu's mask, and a fused batchnorm's own (with its relu).
  bool backward_reads_output() const override {
    return relu_ || (bn_ && bn_->backward_reads_output());
  }
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t n = x.dim(0);
      Tensor g = dy;  // dLoss/d(conv output + bias), built up through the fused layers
      if (relu_) {    // through the relu: dy where y > 0
        Tensor masked = (bn_ ? relu_grad_ : grad_).slice_batch(0, n);
        relu_gradient<T>(y, dy, masked);
        g = masked;
      }
      if (bn_) {  // through the batchnorm, whose input was the internal buffer
        Tensor dpre = grad_.slice_batch(0, n);
        bn_->backward(z_.slice_batch(0, n), y, g, &dpre);
        g = dpre;
      }
      if (use_bias_) bias_gradient<T>(g);
      algorithm_->backward_filter(x, g, dw_);
      if (dx) algorithm_->backward_data(g, w_, *dx);
    });
  }

 private:
  // w_fold = w * a[k], b_fold = b * a + d, where batchnorm (in evaluation) maps channel k's value
  // v to a[k] * v + d[k]: read off by passing it all-zero and all-one samples.
  template <class T>
  void fold() {
    T* probe = probe_in_.data<T>();
    const std::int64_t half = probe_in_.numel() / 2;
    std::fill(probe, probe + half, T(0));
    std::fill(probe + half, probe + 2 * half, T(1));
    bn_->forward(probe_in_, probe_out_, Mode::eval);
    const T* out = probe_out_.data<T>();
    const bool nhwc = g_.layout == Layout::nhwc;
    auto at = [&](std::int64_t sample, std::int64_t k) {  // channel k's first value in a sample
      return out[sample * half + (nhwc ? k : k * g_.ho() * g_.wo())];
    };
    auto a = [&](std::int64_t k) { return at(1, k) - at(0, k); };
    T* bf = b_fold_.data<T>();
    for (std::int64_t k = 0; k < g_.k; ++k)
      bf[k] = (use_bias_ ? b_.data<T>()[k] * a(k) : T(0)) + at(0, k);
    // The filter's output channel: innermost in NHWC [KH, KW, C, K], outermost in NCHW.
    const T* w = w_.data<T>();
    T* wf = w_fold_.data<T>();
    const std::int64_t per_k = w_.numel() / g_.k;
    for (std::int64_t i = 0; i < w_.numel(); ++i) wf[i] = w[i] * a(nhwc ? i % g_.k : i / per_k);
  }

  // NHWC: y[., k] += b[k] along memory, chunk by chunk of the repeating pattern.
  // NCHW: one bias value per (n, k) plane.
  template <class T>
  void add_bias(Tensor& y, const Tensor& bias) {
    const T* b = bias.data<T>();
    T* yp = y.data<T>();
    const std::int64_t n = y.dim(0), pixels = g_.ho() * g_.wo(), k = g_.k;
    if (g_.layout == Layout::nhwc && pattern_ == 0) {
      parallel_for(n * pixels, 256, [&](std::int64_t r) {
        for (std::int64_t j = 0; j < k; ++j) yp[r * k + j] += b[j];
      });
      return;
    }
    if (g_.layout == Layout::nhwc) {
      T* pattern_all = bias_pattern_.data<T>();
      for (std::int64_t i = 0; i < pattern_; ++i) pattern_all[i] = b[i % k];
      const std::int64_t total = n * pixels * k, chunks = total / pattern_, p = pattern_;
      parallel_for(chunks, 4096, [=](std::int64_t c) {
        T* __restrict out = yp + c * p;
        const T* __restrict pat = pattern_all;
        for (std::int64_t i = 0; i < p; ++i) out[i] += pat[i];
      });
      for (std::int64_t i = chunks * p; i < total; ++i) yp[i] += b[i % k];
      return;
    }
    parallel_for(n * k, 64, [&](std::int64_t plane) {
      const T v = b[plane % k];
      for (std::int64_t i = 0; i < pixels; ++i) yp[plane * pixels + i] += v;
    });
  }

  // db[k] += sum of dy over every (n, oy, ox): NHWC sums chunks of the pattern, then folds them.
  template <class T>
  void bias_gradient(const Tensor& dy) {
    T* db = db_.data<T>();
    const T* d = dy.data<T>();
    const std::int64_t n = dy.dim(0), pixels = g_.ho() * g_.wo(), k = g_.k;
    if (g_.layout == Layout::nhwc && pattern_ == 0) {
      for (std::int64_t r = 0; r < n * pixels; ++r)
        for (std::int64_t j = 0; j < k; ++j) db[j] += d[r * k + j];
      return;
    }
    if (g_.layout == Layout::nhwc) {
      const std::int64_t total = n * pixels * k, chunks = total / pattern_, p = pattern_;
      constexpr std::int64_t kGroups = 64;  // fixed partition: the sum does not depend on threads
      double* sums = bias_sums_.data<double>();
      parallel_for(kGroups, 1, [=](std::int64_t g) {
        T acc[kMaxPattern] = {};
        for (std::int64_t c = chunks * g / kGroups; c < chunks * (g + 1) / kGroups; ++c) {
          const T* __restrict in = d + c * p;
          for (std::int64_t i = 0; i < p; ++i) acc[i] += in[i];
        }
        for (std::int64_t i = 0; i < p; ++i) sums[g * p + i] = double(acc[i]);
      });
      for (std::int64_t g = 0; g < kGroups; ++g)
        for (std::int64_t i = 0; i < p; ++i) db[i % k] += static_cast<T>(sums[g * p + i]);
      for (std::int64_t i = chunks * p; i < total; ++i) db[i % k] += d[i];
      return;
    }
    parallel_for(k, 1, [&](std::int64_t ch) {  // one output channel per task: sums in a fixed order
      T total = 0;
      for (std::int64_t s = 0; s < n; ++s) {
        const T* __restrict plane = d + (s * k + ch) * pixels;
        T part = 0;
        for (std::int64_t i = 0; i < pixels; ++i) part += plane[i];
        total += part;
      }
      db[ch] += total;
    });
  }

  Params params_;
  std::optional<Params> bn_params_;  // fused batchnorm's parameters
  std::shared_ptr<Layer> bn_;        // the fused batchnorm
  Tensor z_;                         // [max_batch, output] conv + bias before the batchnorm
  Tensor grad_, relu_grad_;          // [max_batch, output] gradients through the fused layers
  Tensor probe_in_, probe_out_;      // [2, output] fold()'s probes of the batchnorm
  Tensor w_fold_, b_fold_;           // the folded filter and bias (evaluation)

  Tensor bias_pattern_, bias_sums_;
  std::int64_t pattern_ = 0;
  std::shared_ptr<ConvAlgorithm> algorithm_;
  Int8Product int8_;
  int8_conv2d::Runner int8_runner_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Conv2d(p); }

}  // namespace

// The runs of layers conv2d takes into itself (dtnn/model.hpp, fuse_layers), longest first; the
// settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp): each algorithm's
// paths, and the fused forms.
constexpr const char* kTraits = R"({
  "fuses": [
    {"option": "conv_batchnorm_relu", "absorbs": ["batchnorm", "relu"],
     "into": ["batchnorm", "activation"]},
    {"option": "conv_batchnorm", "absorbs": ["batchnorm"], "into": ["batchnorm"]},
    {"option": "conv_relu", "absorbs": ["relu"], "into": ["activation"]}],
  "conformance": [
    {"params": {"filters": 3, "kernel": 3, "padding": 1, "stride": 2}, "input": [5, 6, 2]},
    {"params": {"filters": 3, "kernel": [3, 2], "padding": 1, "algorithm": "i2c"},
     "input": [5, 4, 2]},
    {"params": {"filters": 4, "kernel": 1, "algorithm": "i2c"}, "input": [3, 3, 5]},
    {"params": {"filters": 9, "kernel": 3, "padding": 1, "algorithm": "i2c"}, "input": [4, 3, 2]},
    {"params": {"filters": 5, "kernel": 3, "padding": 1, "algorithm": "direct"},
     "input": [5, 6, 2]},
    {"params": {"filters": 4, "kernel": 3, "padding": 1, "groups": 2, "algorithm": "i2c"},
     "input": [5, 4, 6]},
    {"params": {"filters": 3, "kernel": 3, "stride": 2, "algorithm": "implicit_gemm"}, "input": [5, 6, 2]},
    {"params": {"filters": 3, "kernel": 3, "padding": 1, "activation": "relu",
                "batchnorm": {"gamma": 1.5}}, "input": [4, 4, 2], "batch": 3}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "conv2d",
                   .description =
                       "2-D convolution; the arithmetic is done by the ConvAlgorithm plugin "
                       "conv.algorithm names",
                   .parameters = dtnn::layer_parameters::kConv2dParameters, .traits = kTraits,
                   .factory = create)
