// adaptive_avgpool2d: average pooling to a fixed output size (PyTorch's AdaptiveAvgPool2d,
// MobileNetV2's head). Output cell (oy, ox) averages input rows [floor(oy H / Ho),
// ceil((oy + 1) H / Ho)) and columns likewise, so that the windows cover the input whatever its
// size (they overlap when H is not a multiple of Ho). Backward: each input in a window gets the
// cell's dy divided by the window's size.
#include <cstdint>

#include "adaptive_avgpool2d_base.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class AdaptiveAvgPool2d final : public layer_parameters::AdaptiveAvgPool2dBase {
 public:
  using AdaptiveAvgPool2dBase::AdaptiveAvgPool2dBase;
  void build(const LayerBuildContext& ctx) override { build_shape(ctx); }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      parallel_for(x.dim(0), 1, [&](std::int64_t n) {
        for_each_cell([&](std::int64_t oy, std::int64_t ox, std::int64_t ch, const Window& win) {
          T sum = 0;
          win.visit([&](std::int64_t iy, std::int64_t ix) {
            sum += xp[n * in_size() + in_at(iy, ix, ch)];
          });
          yp[n * out_size() + out_at(oy, ox, ch)] = sum / T(win.size());
        });
      });
    });
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* dyp = dy.data<T>();
      T* dxp = dx->data<T>();
      parallel_for(x.dim(0), 1, [&](std::int64_t n) {
        T* dxs = dxp + n * in_size();
        for (std::int64_t i = 0; i < in_size(); ++i) dxs[i] = T(0);
        for_each_cell([&](std::int64_t oy, std::int64_t ox, std::int64_t ch, const Window& win) {
          const T g = dyp[n * out_size() + out_at(oy, ox, ch)] / T(win.size());
          win.visit([&](std::int64_t iy, std::int64_t ix) { dxs[in_at(iy, ix, ch)] += g; });
        });
      });
    });
  }

 private:
  // The input rows [y0, y1) and columns [x0, x1) of one output cell.
  struct Window {
    std::int64_t y0, y1, x0, x1;
    std::int64_t size() const { return (y1 - y0) * (x1 - x0); }
    template <class F>
    void visit(F&& f) const {
      for (std::int64_t iy = y0; iy < y1; ++iy)
        for (std::int64_t ix = x0; ix < x1; ++ix) f(iy, ix);
    }
  };

  // f(oy, ox, channel, window) for every output cell of one sample.
  template <class F>
  void for_each_cell(F&& f) const {
    for (std::int64_t oy = 0; oy < ho_; ++oy)
      for (std::int64_t ox = 0; ox < wo_; ++ox) {
        const Window win{oy * h_ / ho_, ((oy + 1) * h_ + ho_ - 1) / ho_, ox * w_ / wo_,
                         ((ox + 1) * w_ + wo_ - 1) / wo_};
        for (std::int64_t ch = 0; ch < c_; ++ch) f(oy, ox, ch, win);
      }
  }

  std::int64_t in_size() const { return h_ * w_ * c_; }
  std::int64_t out_size() const { return ho_ * wo_ * c_; }
  std::int64_t in_at(std::int64_t y, std::int64_t x, std::int64_t ch) const {
    return layout_ == Layout::nhwc ? (y * w_ + x) * c_ + ch : (ch * h_ + y) * w_ + x;
  }
  std::int64_t out_at(std::int64_t y, std::int64_t x, std::int64_t ch) const {
    return layout_ == Layout::nhwc ? (y * wo_ + x) * c_ + ch : (ch * ho_ + y) * wo_ + x;
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new AdaptiveAvgPool2d(p); }

}  // namespace

// Conformance: overlapping windows (5 rows into 3), one cell (global average), and more cells
// than inputs along a side (2 columns into 3: windows of one column, shared).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"output_height": 3, "output_width": 2}, "input": [5, 4, 3]},
    {"params": {"output_height": 1, "output_width": 1}, "input": [4, 6, 2]},
    {"params": {"output_height": 2, "output_width": 3}, "input": [4, 2, 2], "batch": 3}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "adaptive_avgpool2d",
                   .description =
                       "average pooling to a fixed output size (PyTorch's adaptive "
                       "pooling windows)",
                   .parameters = dtnn::layer_parameters::kAdaptivePool2dParameters,
                   .traits = kTraits, .factory = create)
