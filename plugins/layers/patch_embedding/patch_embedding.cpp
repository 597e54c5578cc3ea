// patch_embedding (Dosovitskiy et al. 2021, ViT): cuts an image into non-overlapping p x p
// patches and projects each to a vector, making a sequence of (H/p)(W/p) positions:
//   X_p [N * P, p * p * C]  (each row a patch, its values in (row, column, channel) order)
//   y = X_p w + b,  w: [p * p * C, units],  y: [N, P, units]  (P in row-major patch order)
// Backward: dw += X_p^T dy, db += column sums of dy, dX_p = dy w^T scattered back to the image
// (patches do not overlap: each pixel receives one value). NHWC and NCHW images alike.
#include <algorithm>
#include <string>

#include "dtnn/dense.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "patch_embedding_base.hpp"

namespace {

using namespace dtnn;

class PatchEmbedding final : public layer_parameters::PatchEmbeddingBase {
 public:
  using PatchEmbeddingBase::PatchEmbeddingBase;

  void build(const LayerBuildContext& ctx) override {
    build_weights(ctx, ctx.layout, Device::cpu);
    nchw_ = ctx.layout == Layout::nchw;
    precision_ = ctx.precision;
    columns_ = Tensor::empty(Shape{ctx.max_batch * patches(), width()}, ctx.dtype);
    dcolumns_ = Tensor::empty(columns_.shape(), ctx.dtype);  // forward's patches stay for a 2nd
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t rows = x.dim(0) * patches(), in = w_.dim(0);
      T* cols = columns_.data<T>();
      move_patches(x.data<T>(), cols, x.dim(0), /*gather=*/true);
      dense::forward(cols, rows, in, w_.data<T>(), s_.units, s_.use_bias ? b_.data<T>() : nullptr,
                     y.data<T>(), precision_);
    });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t rows = x.dim(0) * patches(), in = w_.dim(0);
      T* cols = columns_.data<T>();
      T* dcols = dx ? dcolumns_.data<T>() : nullptr;
      dense::backward(cols, dy.data<T>(), rows, in, w_.data<T>(), s_.units, dw_.data<T>(),
                      s_.use_bias ? db_.data<T>() : nullptr, dcols, precision_);
      if (!dx) return;
      move_patches(dx->data<T>(), dcols, x.dim(0), /*gather=*/false);
    });
  }

 private:
  // gather: the images' patches into the rows of cols; else cols back into the images.
  template <class T>
  void move_patches(T* image, T* cols, std::int64_t n, bool gather) const {
    const std::int64_t h = image_.h, w = image_.w, channels = image_.c, p = s_.patch;
    const std::int64_t across = w / p, in = width(), image_size = h * w * channels;
    parallel_for(n * patches(), 16, [&](std::int64_t r) {
      const std::int64_t sample = r / patches(), pr = (r % patches()) / across,
                         pc = (r % patches()) % across;
      T* img = image + sample * image_size;
      T* row = cols + r * in;
      for (std::int64_t dy = 0; dy < p; ++dy)
        for (std::int64_t dxp = 0; dxp < p; ++dxp)
          for (std::int64_t c = 0; c < channels; ++c) {
            const std::int64_t y = pr * p + dy, xx = pc * p + dxp;
            T& pixel = nchw_ ? img[(c * h + y) * w + xx] : img[(y * w + xx) * channels + c];
            T& value = row[(dy * p + dxp) * channels + c];
            if (gather)
              value = pixel;
            else
              pixel = value;
          }
    });
  }

  bool nchw_ = false;
  Precision precision_ = Precision::fp32;  // of the projection's products
  Tensor columns_, dcolumns_;
};

Plugin* create(const Params& p, const PluginContext&) { return new PatchEmbedding(p); }

}  // namespace

constexpr const char* kTraits = R"({"conformance": [
    {"params": {"patch": 2, "units": 3}, "input": [4, 6, 2]},
    {"params": {"patch": 3, "units": 2, "use_bias": false}, "input": [3, 3, 1], "batch": 3}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "patch_embedding",
                   .description = "an image's p x p patches projected to vectors: a sequence (ViT)",
                   .parameters = dtnn::layer_parameters::kPatchEmbeddingParameters,
                   .traits = kTraits, .factory = create)
