// conv2d_transpose: the transposed (fractionally strided) convolution of a decoder or a U-Net's
// up path (PyTorch's ConvTranspose2d, Keras's Conv2DTranspose): each input pixel scatters the
// filter, scaled by its value, into the output at stride apart.
//   H_out = (H_in - 1) stride - 2 padding + dilation (kernel - 1) + 1 + output_padding
// It is the gradient of a convolution G whose input has this layer's output shape and whose
// output has this layer's input shape, so any ConvAlgorithm computes it, passes exchanged:
//   y  = G.backward_data(x, w)        forward
//   dx = G.forward(dy, w)             backward, input gradient
//   dw += G.backward_filter(dy, x)    backward, filter gradient
// Filter: G's, with G's input channels = this layer's filters (out) and G's filters = this
// layer's input channels (in): NHWC [KH, KW, out, in]; NCHW [in, out, KH, KW] (ConvTranspose2d's).
#include <string>
#include <vector>

#include "conv2d_transpose_base.hpp"
#include "conv_algorithm_choice.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/log.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/registry.hpp"

namespace {

using namespace dtnn;

class Conv2dTranspose final : public layer_parameters::Conv2dTransposeBase {
 public:
  explicit Conv2dTranspose(const Params& p) : Conv2dTransposeBase(p), params_(p) {}

  std::string attributes() const override {
    return g_.window_str() + " " + (algorithm_ ? algorithm_->name() : std::string());
  }
  std::size_t workspace_bytes() const override {
    return algorithm_ ? algorithm_->workspace_bytes() : 0;
  }
  std::string report() const override { return algorithm_ ? algorithm_->report() : ""; }

  void build(const LayerBuildContext& ctx) override {
    build_weights(ctx, ctx.layout, Device::cpu);
    // G's backward-data and backward-filter always, its forward for an input gradient.
    algorithm_ = layer_parameters::choose_conv_algorithm(
        ctx, params_, g_, {ConvPass::backward_data, ConvPass::backward_filter}, ConvPass::forward,
        "conv2d_transpose");
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    algorithm_->backward_data(x, w_, y);
    if (s_.use_bias) dispatch_dtype(y.dtype(), [&](auto z) { add_bias<decltype(z)>(y); });
  }

  void backward(const Tensor& x, const Tensor& /*y*/, const Tensor& dy, Tensor* dx) override {
    if (s_.use_bias) dispatch_dtype(dy.dtype(), [&](auto z) { bias_gradient<decltype(z)>(dy); });
    if (dx) algorithm_->forward(dy, w_, *dx);  // first: backward-filter may reuse its work
    algorithm_->backward_filter(dy, x, dw_);
  }

 private:
  template <class T>
  void add_bias(Tensor& y) const {
    const T* b = b_.data<T>();
    T* yp = y.data<T>();
    const std::int64_t n = y.dim(0), pixels = g_.h * g_.w, k = s_.filters;
    if (g_.layout == Layout::nhwc) {
      parallel_for(n * pixels, 256, [&](std::int64_t r) {
        for (std::int64_t j = 0; j < k; ++j) yp[r * k + j] += b[j];
      });
    } else {
      parallel_for(n * k, 16, [&](std::int64_t plane) {
        const T v = b[plane % k];
        for (std::int64_t i = 0; i < pixels; ++i) yp[plane * pixels + i] += v;
      });
    }
  }

  template <class T>
  void bias_gradient(const Tensor& dy) {  // one channel per task: sums in a fixed order
    T* db = db_.data<T>();
    const T* d = dy.data<T>();
    const std::int64_t n = dy.dim(0), pixels = g_.h * g_.w, k = s_.filters;
    const bool nhwc = g_.layout == Layout::nhwc;
    parallel_for(k, 1, [&](std::int64_t ch) {
      double total = 0;
      for (std::int64_t s = 0; s < n; ++s)
        for (std::int64_t i = 0; i < pixels; ++i)
          total += double(d[nhwc ? (s * pixels + i) * k + ch : (s * k + ch) * pixels + i]);
      db[ch] += static_cast<T>(total);
    });
  }

  Params params_;
  std::shared_ptr<ConvAlgorithm> algorithm_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Conv2dTranspose(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "conv2d_transpose",
                   .description =
                       "transposed 2-D convolution (a U-Net's up path): the gradient "
                       "of a convolution, computed by a ConvAlgorithm plugin",
                   .parameters = dtnn::layer_parameters::kConv2dTransposeParameters,
                   .traits = R"({"aliases": ["conv_transpose2d", "deconv2d"],
                                 "conformance": [
    {"params": {"filters": 3, "kernel": 2, "stride": 2}, "input": [3, 4, 2]},
    {"params": {"filters": 4, "kernel": 2, "stride": 2, "algorithm": "i2c"}, "input": [2, 2, 8],
     "batch": 3},
    {"params": {"filters": 2, "kernel": 3, "stride": 2, "padding": 1, "output_padding": 1},
     "input": [3, 3, 3]},
    {"params": {"filters": 4, "kernel": [3, 2], "padding": 1, "algorithm": "reference"},
     "input": [4, 3, 2]},
    {"params": {"filters": 3, "kernel": 3, "stride": 2, "algorithm": "implicit_gemm"},
     "input": [3, 3, 2], "batch": 3}]})",
                   .factory = create)
