// patch_embedding (Dosovitskiy et al. 2021, ViT): cuts an image into non-overlapping p x p
// patches and projects each to a vector, making a sequence of (H/p)(W/p) positions:
//   X_p [N * P, p * p * C]  (each row a patch, its values in (row, column, channel) order)
//   y = X_p w + b,  w: [p * p * C, units],  y: [N, P, units]  (P in row-major patch order)
// Backward: dw += X_p^T dy, db += column sums of dy, dX_p = dy w^T scattered back to the image
// (patches do not overlap: each pixel receives one value). NHWC and NCHW images alike.
#include <algorithm>
#include <string>

#include "dtnn/dense.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "patch_embedding_parameters.hpp"

namespace {

using namespace dtnn;

class PatchEmbedding final : public Layer {
 public:
  explicit PatchEmbedding(const Params& p)
      : params_(p),
        patch_(params_.patch),
        units_(params_.units),
        use_bias_(params_.use_bias),
        weights_init_(params_.init.weights),
        biases_init_(params_.init.biases) {}

  std::string type() const override { return "patch_embedding"; }
  Shape output_shape() const override { return Shape{patches(), units_}; }
  std::string weights_shape() const override { return w_.shape().str(); }
  std::string attributes() const override { return params_.attributes(); }
  double forward_flops(std::int64_t batch) const override {
    return 2.0 * double(batch * patches()) * double(w_.numel());
  }

  void build(const LayerBuildContext& ctx) override {
    const Shape& s = ctx.input_shape;
    if (s.rank() != 3) throw Error("patch_embedding: expected an image (H, W, C), got " + s.str());
    nchw_ = ctx.layout == Layout::nchw;
    precision_ = ctx.precision;
    h_ = nchw_ ? s[1] : s[0];
    w_px_ = nchw_ ? s[2] : s[1];
    c_ = nchw_ ? s[0] : s[2];
    params_.check_image(h_, w_px_);
    const std::int64_t in = patch_ * patch_ * c_;
    w_ = Tensor::empty(Shape{in, units_}, ctx.dtype);
    initialize(w_, weights_init_, in, units_, ctx.seed);
    dw_ = Tensor::zeros(w_.shape(), ctx.dtype);
    if (use_bias_) {
      b_ = Tensor::empty(Shape{units_}, ctx.dtype);
      initialize(b_, biases_init_, in, units_, ctx.seed + 1);
      db_ = Tensor::zeros(b_.shape(), ctx.dtype);
    }
    columns_ = Tensor::empty(Shape{ctx.max_batch * patches(), in}, ctx.dtype);
    dcolumns_ = Tensor::empty(columns_.shape(), ctx.dtype);  // forward's patches stay for a 2nd
  }

  std::vector<Parameter> parameters() override {
    std::vector<Parameter> p{{"weights", w_, dw_}};
    if (use_bias_) p.push_back({"biases", b_, db_});
    return p;
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t rows = x.dim(0) * patches(), in = w_.dim(0);
      T* cols = columns_.data<T>();
      move_patches(x.data<T>(), cols, x.dim(0), /*gather=*/true);
      dense::forward(cols, rows, in, w_.data<T>(), units_, use_bias_ ? b_.data<T>() : nullptr,
                     y.data<T>(), precision_);
    });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t rows = x.dim(0) * patches(), in = w_.dim(0);
      T* cols = columns_.data<T>();
      T* dcols = dx ? dcolumns_.data<T>() : nullptr;
      dense::backward(cols, dy.data<T>(), rows, in, w_.data<T>(), units_, dw_.data<T>(),
                      use_bias_ ? db_.data<T>() : nullptr, dcols, precision_);
      if (!dx) return;
      move_patches(dx->data<T>(), dcols, x.dim(0), /*gather=*/false);
    });
  }

 private:
  std::int64_t patches() const { return (h_ / patch_) * (w_px_ / patch_); }

  // gather: the images' patches into the rows of cols; else cols back into the images.
  template <class T>
  void move_patches(T* image, T* cols, std::int64_t n, bool gather) const {
    const std::int64_t across = w_px_ / patch_, in = patch_ * patch_ * c_;
    const std::int64_t image_size = h_ * w_px_ * c_;
    parallel_for(n * patches(), 16, [&](std::int64_t r) {
      const std::int64_t sample = r / patches(), pr = (r % patches()) / across,
                         pc = (r % patches()) % across;
      T* img = image + sample * image_size;
      T* row = cols + r * in;
      for (std::int64_t dy = 0; dy < patch_; ++dy)
        for (std::int64_t dxp = 0; dxp < patch_; ++dxp)
          for (std::int64_t c = 0; c < c_; ++c) {
            const std::int64_t y = pr * patch_ + dy, xx = pc * patch_ + dxp;
            T& pixel = nchw_ ? img[(c * h_ + y) * w_px_ + xx] : img[(y * w_px_ + xx) * c_ + c];
            T& value = row[(dy * patch_ + dxp) * c_ + c];
            if (gather)
              value = pixel;
            else
              pixel = value;
          }
    });
  }

  layer_parameters::PatchEmbedding params_;
  std::int64_t patch_, units_;
  bool use_bias_;
  std::string weights_init_, biases_init_;
  bool nchw_ = false;
  Precision precision_ = Precision::fp32;  // of the projection's products
  std::int64_t h_ = 0, w_px_ = 0, c_ = 0;
  Tensor w_, dw_, b_, db_, columns_, dcolumns_;
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
