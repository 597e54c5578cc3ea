// upsample2d: nearest-neighbour upsampling by whole factors (Keras's UpSampling2D, PyTorch's
// Upsample(scale_factor, mode="nearest")): each pixel repeated size_h x size_w times.
//   y[n, i, j, c] = x[n, i / size_h, j / size_w, c]
//   dx[n, i, j, c] = sum of dy over the size_h x size_w block pixel (i, j) became
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_api.hpp"
#include "upsample2d_parameters.hpp"

namespace {

using namespace dtnn;

class Upsample2d final : public Layer {
 public:
  explicit Upsample2d(const Params& p) : params_(p), sh_(params_.rows), sw_(params_.columns) {}

  std::string type() const override { return "upsample2d"; }
  std::string attributes() const override { return params_.attributes(); }
  Shape output_shape() const override {
    return nhwc_ ? Shape{h_ * sh_, w_ * sw_, c_} : Shape{c_, h_ * sh_, w_ * sw_};
  }

  void build(const LayerBuildContext& ctx) override {
    const Shape& in = ctx.input_shape;
    if (in.rank() != 3) throw Error("upsample2d expects image input (H, W, C), got " + in.str());
    nhwc_ = ctx.layout == Layout::nhwc;
    h_ = nhwc_ ? in[0] : in[1];
    w_ = nhwc_ ? in[1] : in[2];
    c_ = nhwc_ ? in[2] : in[0];
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      const std::int64_t ho = h_ * sh_, wo = w_ * sw_;
      if (nhwc_) {  // a row of the output: each input pixel's channels repeated sw times
        parallel_for(x.dim(0) * ho, 8, [&](std::int64_t row) {
          const std::int64_t n = row / ho, i = row % ho;
          const T* in = xp + (n * h_ + i / sh_) * w_ * c_;
          T* out = yp + row * wo * c_;
          for (std::int64_t j = 0; j < w_; ++j)
            for (std::int64_t r = 0; r < sw_; ++r)
              for (std::int64_t c = 0; c < c_; ++c) out[(j * sw_ + r) * c_ + c] = in[j * c_ + c];
        });
      } else {
        parallel_for(x.dim(0) * c_ * ho, 16, [&](std::int64_t row) {
          const std::int64_t plane = row / ho, i = row % ho;
          const T* in = xp + (plane * h_ + i / sh_) * w_;
          T* out = yp + row * wo;
          for (std::int64_t j = 0; j < wo; ++j) out[j] = in[j / sw_];
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
      const std::int64_t ho = h_ * sh_, wo = w_ * sw_;
      // One input pixel (all its channels) per task: its block's sum in a fixed order.
      parallel_for(x.dim(0) * h_ * w_, 64, [&](std::int64_t pixel) {
        const std::int64_t n = pixel / (h_ * w_), i = pixel / w_ % h_, j = pixel % w_;
        for (std::int64_t c = 0; c < c_; ++c) {
          T sum = 0;
          for (std::int64_t a = 0; a < sh_; ++a)
            for (std::int64_t b = 0; b < sw_; ++b) {
              const std::int64_t oy = i * sh_ + a, ox = j * sw_ + b;
              sum += d[nhwc_ ? ((n * ho + oy) * wo + ox) * c_ + c
                             : ((n * c_ + c) * ho + oy) * wo + ox];
            }
          out[nhwc_ ? ((n * h_ + i) * w_ + j) * c_ + c : ((n * c_ + c) * h_ + i) * w_ + j] = sum;
        }
      });
    });
  }

 private:
  layer_parameters::Upsample2d params_;
  std::int64_t sh_, sw_;
  bool nhwc_ = true;
  std::int64_t h_ = 0, w_ = 0, c_ = 0;
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
