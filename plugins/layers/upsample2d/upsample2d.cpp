// upsample2d: nearest-neighbour upsampling by whole factors (Keras's UpSampling2D, PyTorch's
// Upsample(scale_factor, mode="nearest")): each pixel repeated size_h x size_w times.
//   y[n, i, j, c] = x[n, i / size_h, j / size_w, c]
//   dx[n, i, j, c] = sum of dy over the size_h x size_w block pixel (i, j) became
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_api.hpp"
#include "upsample2d_base.hpp"

namespace {

using namespace dtnn;

class Upsample2d final : public layer_parameters::Upsample2dBase {
 public:
  using Upsample2dBase::Upsample2dBase;
  void build(const LayerBuildContext& ctx) override { build_shape(ctx); }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      const std::int64_t ho = h_ * s_.rows, wo = w_ * s_.columns;
      if (nhwc_) {  // a row of the output: each input pixel's channels repeated sw times
        parallel_for(x.dim(0) * ho, 8, [&](std::int64_t row) {
          const std::int64_t n = row / ho, i = row % ho;
          const T* in = xp + (n * h_ + i / s_.rows) * w_ * c_;
          T* out = yp + row * wo * c_;
          for (std::int64_t j = 0; j < w_; ++j)
            for (std::int64_t r = 0; r < s_.columns; ++r)
              for (std::int64_t c = 0; c < c_; ++c)
                out[(j * s_.columns + r) * c_ + c] = in[j * c_ + c];
        });
      } else {
        parallel_for(x.dim(0) * c_ * ho, 16, [&](std::int64_t row) {
          const std::int64_t plane = row / ho, i = row % ho;
          const T* in = xp + (plane * h_ + i / s_.rows) * w_;
          T* out = yp + row * wo;
          for (std::int64_t j = 0; j < wo; ++j) out[j] = in[j / s_.columns];
        });
      }
    });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* d = dy.data<T>();
      T* out = dx->data<T>();
      const std::int64_t ho = h_ * s_.rows, wo = w_ * s_.columns;
      // One input pixel (all its channels) per task: its block's sum in a fixed order.
      parallel_for(x.dim(0) * h_ * w_, 64, [&](std::int64_t pixel) {
        const std::int64_t n = pixel / (h_ * w_), i = pixel / w_ % h_, j = pixel % w_;
        for (std::int64_t c = 0; c < c_; ++c) {
          T sum = 0;
          for (std::int64_t a = 0; a < s_.rows; ++a)
            for (std::int64_t b = 0; b < s_.columns; ++b) {
              const std::int64_t oy = i * s_.rows + a, ox = j * s_.columns + b;
              sum += d[nhwc_ ? ((n * ho + oy) * wo + ox) * c_ + c
                             : ((n * c_ + c) * ho + oy) * wo + ox];
            }
          out[nhwc_ ? ((n * h_ + i) * w_ + j) * c_ + c : ((n * c_ + c) * h_ + i) * w_ + j] = sum;
        }
      });
    });
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new Upsample2d(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "upsample2d",
                   .description = "nearest-neighbour upsampling by whole factors",
                   .parameters = dtnn::layer_parameters::kUpsample2dParameters,
                   .traits = R"({"aliases": ["upsampling2d"],
                                 "conformance": [
    {"params": {"size": 2}, "input": [3, 2, 2]},
    {"params": {"size": [3, 1]}, "input": [2, 3, 3], "batch": 3}]})",
                   .factory = create)
