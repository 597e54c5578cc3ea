// A layer plugin that lives outside the plugin folder (found through DTNN_PLUGIN_PATH in the
// registry test) and, rebuilt with another DTNN_PLUGIN_ABI_VERSION, plays a stale plugin.
// y = factor * x.
#include "dtnn/layer.hpp"
#include "dtnn/plugin_api.hpp"

namespace {
using namespace dtnn;
class Scale final : public Layer {
 public:
  explicit Scale(const Params& p) : factor_(p.get_double("factor")) {}
  std::string type() const override { return "test_scale"; }
  void build(const LayerBuildContext& ctx) override { shape_ = ctx.input_shape; }
  Shape output_shape() const override { return shape_; }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    for (std::int64_t i = 0; i < x.numel(); ++i)
      y.data<double>()[i] = factor_ * x.data<double>()[i];
  }
  void backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (dx)
      for (std::int64_t i = 0; i < dy.numel(); ++i)
        dx->data<double>()[i] = factor_ * dy.data<double>()[i];
  }

 private:
  double factor_;
  Shape shape_;
};
Plugin* create(const Params& p, const PluginContext&) { return new Scale(p); }
}  // namespace

DTNN_PLUGIN("layer", "test_scale", "test double: y = factor * x", R"({"factor": 2.0})", create)
