// log_softmax over the last axis: y_i = x_i - max x - log sum_j exp(x_j - max x).
// Backward: dx_i = dy_i - softmax(x)_i * sum_j dy_j, softmax(x)_i = exp(y_i).
// A sample of one axis is one row; a sequence's [T, classes] is T rows. In float the exps are
// dtnn/fast_math.hpp's (they vectorise), the sums dtnn/reductions.hpp's.
#include <algorithm>
#include <cmath>

#include "dtnn/fast_math.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/reductions.hpp"

namespace {

using namespace dtnn;

class LogSoftmax final : public Layer {
 public:
  std::string type() const override { return "log_softmax"; }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    width_ = shape_[shape_.rank() - 1];
  }
  Shape output_shape() const override { return shape_; }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t m = width_, rows = x.numel() / m;
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      parallel_for(rows, 64, [&](std::int64_t r) {
        const T* __restrict xr = xp + r * m;
        T* __restrict yr = yp + r * m;
        const T mx = reduce::max(xr, m);
        for (std::int64_t i = 0; i < m; ++i) yr[i] = fast::exp(xr[i] - mx);  // y as scratch
        const T shift = mx + std::log(reduce::sum(yr, m));
        for (std::int64_t i = 0; i < m; ++i) yr[i] = xr[i] - shift;
      });
    });
  }

  void backward(const Tensor&, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t m = width_, rows = y.numel() / m;
      const T *yp = y.data<T>(), *dyp = dy.data<T>();
      T* dxp = dx->data<T>();
      parallel_for(rows, 64, [&](std::int64_t r) {
        const T* __restrict yr = yp + r * m;
        const T* __restrict g = dyp + r * m;
        T* __restrict out = dxp + r * m;
        const T sum = reduce::sum(g, m);
        for (std::int64_t i = 0; i < m; ++i) out[i] = g[i] - fast::exp(yr[i]) * sum;
      });
    });
  }

 private:
  Shape shape_;
  std::int64_t width_ = 1;
};

Plugin* create(const Params&, const PluginContext&) { return new LogSoftmax(); }

}  // namespace

constexpr const char* kTraits = R"({"conformance": [
    {"input": [7]},
    {"input": [4, 5], "batch": 3}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "log_softmax",
                   .description =
                       "logarithm of the softmax over the last axis (numerically stable)",
                   .parameters = "{}", .traits = kTraits, .factory = create)
