// cuda_leaky_relu: y = x > 0 ? x : slope x on the GPU (a dtnn kernel: cuDNN has no leaky relu).
#include "cuda_plugin.hpp"
#include "kernels.hpp"
#include "leaky_relu_parameters.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaLeakyRelu final : public Layer {
 public:
  explicit CudaLeakyRelu(const Params& p) : slope_(p.get_double("negative_slope")) {}
  std::string type() const override { return "leaky_relu"; }
  Shape output_shape() const override { return shape_; }
  std::string attributes() const override { return "negative_slope=" + std::to_string(slope_); }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    dtype_ = ctx.dtype;
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    kernels::leaky_relu_forward(Context::get().stream(), y.raw(), x.raw(),
                                static_cast<std::size_t>(x.numel()), dtype_, slope_);
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (dx)
      kernels::leaky_relu_backward(Context::get().stream(), dx->raw(), x.raw(), dy.raw(),
                                   static_cast<std::size_t>(x.numel()), dtype_, slope_);
  }

 private:
  double slope_;
  Shape shape_;
  DType dtype_ = DType::float32;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaLeakyRelu(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"negative_slope": 0.1}, "input_nchw": [2, 5, 5]}]})";

DTNN_CUDA_LAYER("leaky_relu",
                "leaky rectified linear unit on an NVIDIA GPU, y = x > 0 ? x : slope * x",
                dtnn::layer_parameters::kLeakyReluParameters, kTwinChecks, create)
