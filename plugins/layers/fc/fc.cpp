// fc: fully connected layer. x: [N, in] (any per-sample shape, taken flat), w: [in, units],
// b: [units], y: [N, units] = x w + b. With "flatten": false every position of the last axis is
// a row: x [N, ..., in] -> y [N, ..., units]. Int8 inference (dtnn/int8_product.hpp; float32):
// once the product is quantised, evaluation codes x's rows and runs the int8 GEMM on them.
#include <algorithm>
#include <string>
#include <vector>

#include "dtnn/dense.hpp"
#include "dtnn/int8_product.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "fc_base.hpp"

namespace {

using namespace dtnn;

class FullyConnected final : public layer_parameters::FcBase {
 public:
  using FcBase::FcBase;

  void build(const LayerBuildContext& ctx) override {
    build_weights(ctx, Device::cpu);
    precision_ = ctx.precision;
    if (ctx.dtype == DType::float32)
      int8_.bind(in_, s_.units, [this] {
        const float* w = w_.data<float>();
        return std::vector<float>(w, w + w_.numel());
      });
  }
  Int8Product* int8_product() override { return int8_.k() > 0 ? &int8_ : nullptr; }

  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    if (int8_.observing()) int8_.observe(x.data<float>(), x.numel());
    if (mode == Mode::eval && int8_.ready()) return forward_int8(x, y);
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, y); });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) { backward_t<decltype(z)>(x, dy, dx); });
  }

 private:
  template <class T>
  void forward_t(const Tensor& x, Tensor& y) {
    dense::forward(x.data<T>(), rows(x), in_, w_.data<T>(), s_.units,
                   s_.use_bias ? b_.data<T>() : nullptr, y.data<T>(), precision_);
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
