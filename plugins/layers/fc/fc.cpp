// fc: fully connected layer. x: [N, in] (any per-sample shape, taken flat), w: [in, units],
// b: [units], y: [N, units] = x w + b. With "flatten": false every position of the last axis is
// a row: x [N, ..., in] -> y [N, ..., units]. Int8 inference (dtnn/int8_product.hpp; float32):
// once the product is quantised, evaluation codes x's rows and runs the int8 GEMM on them.
// With "gelu": {...} (the fusion option fc_gelu) y = gelu(z), z = x w + b, the gelu a layer of
// its own plugin built inside: forward runs on blocks of rows, each block's gelu while its z is
// still in cache, and keeps z for backward, which takes dz = gelu'(z) dy and the products block
// by block too, so that neither z nor dz makes a round trip through memory between two passes.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "dtnn/dense.hpp"
#include "dtnn/int8_product.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/registry.hpp"
#include "fc_base.hpp"

namespace {

using namespace dtnn;

// The bytes of a block of z that the fused gelu works on (L2 holds it on the CPUs dtnn meets).
constexpr std::int64_t kFusedBlockBytes = 512 * 1024;

class FullyConnected final : public layer_parameters::FcBase {
 public:
  using FcBase::FcBase;

  std::string attributes() const override { return gelu_ ? "gelu" : ""; }

  void build(const LayerBuildContext& ctx) override {
    build_weights(ctx, Device::cpu);
    precision_ = ctx.precision;
    if (s_.gelu) build_gelu(ctx);
    if (ctx.dtype == DType::float32)
      int8_.bind(in_, s_.units, [this] {
        const float* w = w_.data<float>();
        return std::vector<float>(w, w + w_.numel());
      });
  }
  Int8Product* int8_product() override { return int8_.k() > 0 ? &int8_ : nullptr; }

  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    if (int8_.observing()) int8_.observe(x.data<float>(), x.numel());
    if (mode == Mode::eval && int8_.ready()) {
      forward_int8(x, y);
      if (gelu_) {  // in place, by rows
        Tensor yr = y.view(Shape{rows(x), s_.units});
        gelu_->forward(yr, yr, mode);
      }
      return;
    }
    dispatch_dtype(x.dtype(), [&](auto z) {
      if (gelu_)
        forward_gelu<decltype(z)>(x, y, mode);
      else
        forward_t<decltype(z)>(x, y);
    });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      if (gelu_)
        backward_gelu<decltype(z)>(x, dy, dx);
      else
        backward_t<decltype(z)>(x, dy, dx);
    });
  }

 private:
  template <class T>
  void forward_t(const Tensor& x, Tensor& y) {
    dense::forward(x.data<T>(), rows(x), in_, w_.data<T>(), s_.units,
                   s_.use_bias ? b_.data<T>() : nullptr, y.data<T>(), precision_);
  }

  // The gelu layer, for blocks of rows of z (each row a sample of `units` values), and z.
  void build_gelu(const LayerBuildContext& ctx) {
    const std::int64_t max_rows = ctx.max_batch * (s_.flatten ? 1 : input_.numel() / in_);
    block_rows_ = std::clamp<std::int64_t>(
        kFusedBlockBytes / (s_.units * std::int64_t(dtype_size(ctx.dtype))), 8, 256);
    gelu_ = ctx.registry->create_as<Layer>("layer", "gelu", *s_.gelu);
    LayerBuildContext c = ctx;
    c.input_shape = Shape{s_.units};
    c.max_batch = std::min(block_rows_, max_rows);
    gelu_->build(c);
    z_ = Tensor::empty(Shape{max_rows, s_.units}, ctx.dtype);
    dz_ = Tensor::empty(Shape{c.max_batch, s_.units}, ctx.dtype);
  }

  // z = x w + b and y = gelu(z), a block of rows at a time.
  template <class T>
  void forward_gelu(const Tensor& x, Tensor& y, Mode mode) {
    const std::int64_t n = rows(x), u = s_.units;
    const Tensor z = z_.view(Shape{n, u}), ys = y.view(Shape{n, u});
    for (std::int64_t r0 = 0; r0 < n; r0 += block_rows_) {
      const std::int64_t r1 = std::min(n, r0 + block_rows_);
      dense::forward(x.data<T>() + r0 * in_, r1 - r0, in_, w_.data<T>(), u,
                     s_.use_bias ? b_.data<T>() : nullptr, z.data<T>() + r0 * u, precision_);
      Tensor yb = ys.slice_batch(r0, r1);
      gelu_->forward(z.slice_batch(r0, r1), yb, mode);
    }
  }

  // dz = gelu'(z) dy, then fc's gradients from dz, a block of rows at a time (dw and db add up
  // over the blocks). gelu's gradient reads its input, z, and not its output.
  template <class T>
  void backward_gelu(const Tensor& x, const Tensor& dy, Tensor* dx) {
    const std::int64_t n = rows(x), u = s_.units;
    const Tensor z = z_.view(Shape{n, u}), dys = dy.view(Shape{n, u});
    for (std::int64_t r0 = 0; r0 < n; r0 += block_rows_) {
      const std::int64_t r1 = std::min(n, r0 + block_rows_);
      const Tensor zb = z.slice_batch(r0, r1);
      Tensor dz = dz_.view(Shape{r1 - r0, u});
      gelu_->backward(zb, zb, dys.slice_batch(r0, r1), &dz);
      dense::backward(x.data<T>() + r0 * in_, dz.data<T>(), r1 - r0, in_, w_.data<T>(), u,
                      dw_.data<T>(), s_.use_bias ? db_.data<T>() : nullptr,
                      dx ? dx->data<T>() + r0 * in_ : nullptr, precision_);
    }
  }

  // Rows coded in blocks of kRows, each block a task: the codes of a block are the task's own.
  void forward_int8(const Tensor& x, Tensor& y) {
    constexpr std::int64_t kRows = 48;
    const std::int64_t n = rows(x), lda = int8_.padded_k();
    if (static_cast<std::int64_t>(codes_.size()) < n * lda)
      codes_.assign(static_cast<std::size_t>(n * lda), Int8Product::kZeroCode);
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    const float* bias = s_.use_bias ? b_.data<float>() : nullptr;
    parallel_for((n + kRows - 1) / kRows, 2, [&](std::int64_t block) {
      const std::int64_t r0 = block * kRows, count = std::min(kRows, n - r0);
      std::uint8_t* codes = codes_.data() + r0 * lda;
      for (std::int64_t r = 0; r < count; ++r)
        int8_.encode(xp + (r0 + r) * in_, in_, codes + r * lda);
      int8_.run(count, int8_.rows(codes, lda), bias, false, yp + r0 * s_.units, s_.units);
    });
  }

  // From y = x w + b:  dw += x^T dy,  db += sum_rows(dy),  dx = dy w^T.
  template <class T>
  void backward_t(const Tensor& x, const Tensor& dy, Tensor* dx) {
    dense::backward(x.data<T>(), dy.data<T>(), rows(x), in_, w_.data<T>(), s_.units, dw_.data<T>(),
                    s_.use_bias ? db_.data<T>() : nullptr, dx ? dx->data<T>() : nullptr,
                    precision_);
  }

  Precision precision_ = Precision::fp32;
  Int8Product int8_;
  std::vector<std::uint8_t> codes_;  // int8: x's rows coded, padded_k() bytes each
  std::shared_ptr<Layer> gelu_;      // the fused gelu, or null
  std::int64_t block_rows_ = 0;      // rows per block with the fused gelu
  Tensor z_;                         // [rows, units] x w + b, kept for the gelu's backward
  Tensor dz_;                        // [block_rows_, units] a block's gelu'(z) dy
};

Plugin* create(const Params& p, const PluginContext&) { return new FullyConnected(p); }

}  // namespace

// The run it takes into itself (dtnn/model.hpp, fuse_layers); the settings its conformance checks
// run at (dtnn/testing/plugin_conformance.hpp): the fused gelu in both forms, over several blocks
// of rows in the last (200 positions of 3 units: blocks of 256 rows).
constexpr const char* kTraits = R"({
  "fuses": [{"option": "fc_gelu", "absorbs": ["gelu"], "into": ["gelu"]}],
  "conformance": [
    {"params": {"units": 5}, "input": [3, 2, 2]},
    {"params": {"units": 4, "use_bias": false}, "input": [6]},
    {"params": {"units": 3, "flatten": false}, "input": [4, 5]},
    {"params": {"units": 5, "gelu": {}}, "input": [3, 2, 2]},
    {"params": {"units": 3, "flatten": false, "gelu": {"approximate": "tanh"}},
     "input": [200, 2], "batch": 3}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "fc",
                   .description = "fully connected: y = x w + b, x flattened per sample",
                   .parameters = dtnn::layer_parameters::kFcParameters, .traits = kTraits,
                   .factory = create)
