// example_loops: the smallest useful conv algorithm plugin, written out of the dtnn tree. Plain
// loops over NHWC tensors in float32 (it says so through supports(), and conv2d or best_of use
// something else elsewhere); a starting point to make faster, not a fast algorithm.
#include "dtnn/conv_algorithm.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class ExampleLoops final : public ConvAlgorithm {
 public:
  std::string name() const override { return "example_loops"; }

  bool supports(const ConvGeometry& g, ConvPass, std::string& why_not) const override {
    if (g.layout != Layout::nhwc || g.dtype != DType::float32) {
      why_not = "NHWC float32 only";
      return false;
    }
    return true;
  }

  void prepare(const ConvGeometry& g) override { g_ = g; }  // no workspace

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    float* out = y.data<float>();
    for (std::int64_t i = 0; i < y.numel(); ++i) out[i] = 0;
    visit(x.dim(0), [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
      out[yi] += x.data<float>()[xi] * w.data<float>()[wi];
    });
  }

  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    float* out = dx.data<float>();
    for (std::int64_t i = 0; i < dx.numel(); ++i) out[i] = 0;
    visit(dy.dim(0), [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
      out[xi] += dy.data<float>()[yi] * w.data<float>()[wi];
    });
  }

  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {  // accumulates
    visit(x.dim(0), [&](std::int64_t xi, std::int64_t wi, std::int64_t yi) {
      dw.data<float>()[wi] += x.data<float>()[xi] * dy.data<float>()[yi];
    });
  }

 private:
  // f(x index, w index, y index) for every product of the convolution, padding skipped.
  template <class F>
  void visit(std::int64_t batch, F&& f) const {
    const ConvGeometry& g = g_;
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t oy = 0; oy < g.ho(); ++oy)
        for (std::int64_t ox = 0; ox < g.wo(); ++ox)
          for (std::int64_t ky = 0; ky < g.kh; ++ky)
            for (std::int64_t kx = 0; kx < g.kw; ++kx) {
              const std::int64_t iy = oy * g.stride_h - g.pad_h + ky * g.dilation_h;
              const std::int64_t ix = ox * g.stride_w - g.pad_w + kx * g.dilation_w;
              if (iy < 0 || iy >= g.h || ix < 0 || ix >= g.w) continue;
              for (std::int64_t c = 0; c < g.c; ++c)
                for (std::int64_t k = 0; k < g.k; ++k)
                  f(((n * g.h + iy) * g.w + ix) * g.c + c, ((ky * g.kw + kx) * g.c + c) * g.k + k,
                    ((n * g.ho() + oy) * g.wo() + ox) * g.k + k);
            }
  }

  ConvGeometry g_;
};

Plugin* create(const Params&, const PluginContext&) { return new ExampleLoops(); }

}  // namespace

DTNN_PLUGIN("conv", "example_loops", "example out-of-tree plugin: plain loops, NHWC float32",
            R"({})", create)
