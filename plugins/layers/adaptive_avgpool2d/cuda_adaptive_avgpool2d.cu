// cuda_adaptive_avgpool2d: average pooling to a fixed output size on the GPU (NCHW), with the CPU
// layer's windows: output cell (oy, ox) averages input rows [floor(oy H / Ho),
// ceil((oy + 1) H / Ho)) and columns likewise (they overlap when H is not a multiple of Ho).
// Backward gathers: each input sums dy / window size over the cells whose windows hold it, so
// that no two threads write one value (no atomics; the same sums every run).
#include "adaptive_avgpool2d_base.hpp"
#include "check.hpp"
#include "cuda_plugin.hpp"
#include "launch.cuh"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// Output cell o's window along an axis of `in` values pooled to `out`: [begin, end).
struct Window {
  std::int64_t begin, end;
  __device__ Window(std::int64_t o, std::int64_t in, std::int64_t out)
      : begin((o * in) / out), end(((o + 1) * in + out - 1) / out) {}
  __device__ bool holds(std::int64_t i) const { return i >= begin && i < end; }
  __device__ std::int64_t size() const { return end - begin; }
};

// One thread per output value of [planes, ho, wo] (a plane: one sample's channel).
template <class T>
__global__ void forward_kernel(T* y, const T* x, std::size_t n, std::int64_t h, std::int64_t w,
                               std::int64_t ho, std::int64_t wo) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t plane = std::int64_t(i) / (ho * wo), cell = std::int64_t(i) % (ho * wo);
    const Window rows(cell / wo, h, ho), cols(cell % wo, w, wo);
    const T* p = x + plane * h * w;
    T sum = 0;
    for (std::int64_t r = rows.begin; r < rows.end; ++r)
      for (std::int64_t c = cols.begin; c < cols.end; ++c) sum += p[r * w + c];
    y[i] = sum / T(rows.size() * cols.size());
  }
}

// One thread per input value: the sum over the cells whose windows hold it.
template <class T>
__global__ void backward_kernel(T* dx, const T* dy, std::size_t n, std::int64_t h, std::int64_t w,
                                std::int64_t ho, std::int64_t wo) {
  DTNN_GRID_STRIDE(i, n) {
    const std::int64_t plane = std::int64_t(i) / (h * w), at = std::int64_t(i) % (h * w);
    const std::int64_t r = at / w, c = at % w;
    const T* g = dy + plane * ho * wo;
    T sum = 0;
    for (std::int64_t oy = 0; oy < ho; ++oy) {
      const Window rows(oy, h, ho);
      if (!rows.holds(r)) continue;
      for (std::int64_t ox = 0; ox < wo; ++ox) {
        const Window cols(ox, w, wo);
        if (cols.holds(c)) sum += g[oy * wo + ox] / T(rows.size() * cols.size());
      }
    }
    dx[i] = sum;
  }
}

class CudaAdaptiveAvgPool2d final : public layer_parameters::AdaptiveAvgPool2dBase {
 public:
  using AdaptiveAvgPool2dBase::AdaptiveAvgPool2dBase;
  void build(const LayerBuildContext& ctx) override {
    build_shape(ctx);
    chw_of(ctx, "adaptive_avgpool2d");  // NCHW: the kernels' layout
    dtype_ = ctx.dtype;
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    const auto n = static_cast<std::size_t>(x.dim(0) * c_ * ho_ * wo_);
    if (n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      forward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(y.raw()), static_cast<const T*>(x.raw()), n, h_, w_, ho_, wo_);
    });
    check_launch();
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    const auto n = static_cast<std::size_t>(x.dim(0) * c_ * h_ * w_);
    if (n == 0) return;
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      backward_kernel<<<blocks(n), kThreads, 0, Context::get().stream()>>>(
          static_cast<T*>(dx->raw()), static_cast<const T*>(dy.raw()), n, h_, w_, ho_, wo_);
    });
    check_launch();
  }

 private:
  DType dtype_ = DType::float32;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaAdaptiveAvgPool2d(p); }

}  // namespace

// Overlapping windows (5 rows into 3), one cell (global average), more cells than inputs.
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"output_height": 3, "output_width": 2}, "input_nchw": [3, 5, 4]},
    {"params": {"output_height": 1, "output_width": 1}, "input_nchw": [2, 4, 6]},
    {"params": {"output_height": 2, "output_width": 3}, "input_nchw": [2, 4, 2]}]})";

DTNN_CUDA_LAYER("adaptive_avgpool2d",
                "average pooling to a fixed output size on an NVIDIA GPU (NCHW, PyTorch's "
                "adaptive windows)",
                dtnn::layer_parameters::kAdaptivePool2dParameters, kTwinChecks, create)
