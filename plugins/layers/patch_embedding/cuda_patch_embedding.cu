// cuda_patch_embedding: the CPU layer's ViT patches on the GPU (patch_embedding.cpp has the
// formulas), NCHW images: a kernel gathers each p x p patch into a row (its values in (row,
// column, channel) order, as on the CPU), cuBLAS projects the rows (cuda_dense.hpp); backward
// projects the gradient back and scatters it to the pixels (patches do not overlap: each pixel
// gets one value, no atomics).
#include "cuda_dense.hpp"
#include "cuda_plugin.hpp"
#include "launch.cuh"
#include "patch_embedding_base.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

struct Geometry {
  std::int64_t c, h, w, patch;
  __device__ std::int64_t patches() const { return (h / patch) * (w / patch); }
  __device__ std::int64_t row_width() const { return patch * patch * c; }
  // Element i of the patch rows [n * P, p * p * C]: where its pixel is in the NCHW images.
  __device__ std::int64_t pixel_of(std::int64_t i) const {
    const std::int64_t in = row_width(), r = i / in, k = i % in;
    const std::int64_t sample = r / patches(), across = w / patch;
    const std::int64_t pr = (r % patches()) / across, pc = (r % patches()) % across;
    const std::int64_t dy = k / (patch * c), dx = (k / c) % patch, ch = k % c;
    return ((sample * c + ch) * h + pr * patch + dy) * w + pc * patch + dx;
  }
};

// gather: rows[i] = image[pixel of i]; else image[pixel of i] = rows[i].
template <bool kGather, class T>
__global__ void patches_kernel(T* image, T* rows, std::size_t n, Geometry g) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t pixel = g.pixel_of(std::int64_t(i));
    if (kGather)
      rows[i] = image[pixel];
    else
      image[pixel] = rows[i];
  }
}

class CudaPatchEmbedding final : public layer_parameters::PatchEmbeddingBase {
 public:
  using PatchEmbeddingBase::PatchEmbeddingBase;

  void build(const LayerBuildContext& ctx) override {
    chw_of(ctx, "patch_embedding");  // refuses NHWC by name
    build_weights(ctx, Layout::nchw, Device::cuda);
    g_ = {image_.c, image_.h, image_.w, s_.patch};
    dtype_ = ctx.dtype;
    rows_ = Tensor::empty(Shape{ctx.max_batch * patches(), width()}, dtype_, Layout::nchw,
                          Device::cuda);
    drows_ = Tensor::empty(rows_.shape(), dtype_, Layout::nchw, Device::cuda);
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    const std::int64_t rows = x.dim(0) * patches(), width = w_.dim(0);
    if (rows == 0) return;
    move<true>(const_cast<void*>(x.raw()), rows_.raw(), std::size_t(rows * width));
    dense::forward(dtype_, rows_.raw(), rows, width, w_.raw(), s_.units,
                   s_.use_bias ? b_.raw() : nullptr, y.raw());
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    const std::int64_t rows = x.dim(0) * patches(), width = w_.dim(0);
    if (rows == 0) return;
    dense::backward(dtype_, rows_.raw(), dy.raw(), rows, width, w_.raw(), s_.units, dw_.raw(),
                    s_.use_bias ? db_.raw() : nullptr, dx ? drows_.raw() : nullptr);
    if (dx) move<false>(dx->raw(), drows_.raw(), std::size_t(rows * width));
  }

 private:
  template <bool kGather>
  void move(void* image, void* rows, std::size_t n) const {
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      patches_kernel<kGather><<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(image), static_cast<T*>(rows), n, g_);
    });
    check_launch();
  }

  Geometry g_{1, 1, 1, 1};
  DType dtype_ = DType::float32;
  Tensor rows_, drows_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaPatchEmbedding(p); }

}  // namespace

// The CPU layer's cases (as NCHW: channels first).
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"patch": 2, "units": 3}, "input_nchw": [2, 4, 6]},
    {"params": {"patch": 3, "units": 2, "use_bias": false}, "input_nchw": [1, 3, 3]}]})";

DTNN_CUDA_LAYER("patch_embedding",
                "an image's p x p patches projected to vectors on an NVIDIA GPU: a sequence (ViT)",
                dtnn::layer_parameters::kPatchEmbeddingParameters, kTwinChecks, create)
