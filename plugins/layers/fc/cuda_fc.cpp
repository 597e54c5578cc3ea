// cuda_fc: fully connected on the GPU through cuBLAS (cuda_dense.hpp), weights [in, units]
// row-major as the CPU fc keeps them.  y = x w + b;  dw += x^T dy;  db += column sums of dy;
// dx = dy w^T.
#include "check.hpp"
#include "cuda_dense.hpp"
#include "cuda_plugin.hpp"
#include "layer_parameters.hpp"
#include "pydtnn_names.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaFc final : public Layer {
 public:
  explicit CudaFc(const Params& p) : s_(p) {}

  std::string type() const override { return "fc"; }
  Shape output_shape() const override { return s_.output_shape(input_); }
  std::string weights_shape() const override { return w_.shape().str(); }
  double forward_flops(std::int64_t batch) const override {
    return 2.0 * static_cast<double>(batch * input_.numel() / in_) *
           static_cast<double>(w_.numel());
  }
  std::string attributes() const override { return "cublas"; }

  void build(const LayerBuildContext& ctx) override {
    input_ = ctx.input_shape;
    in_ = s_.features(input_);
    dtype_ = ctx.dtype;
    w_ = initialized(Shape{in_, s_.units}, dtype_, s_.init.weights, in_, s_.units, ctx.seed);
    dw_ = Tensor::zeros(w_.shape(), dtype_, Layout::nchw, Device::cuda);
    if (s_.use_bias) {
      b_ = initialized(Shape{s_.units}, dtype_, s_.init.biases, in_, s_.units, ctx.seed + 1);
      db_ = Tensor::zeros(b_.shape(), dtype_, Layout::nchw, Device::cuda);
    }
  }

  void pydtnn_arrays(PydtnnArrays& out, const Shape&) override {
    pydtnn_names::fc(out, parameters());
  }
  std::vector<Parameter> parameters() override {
    std::vector<Parameter> p{{"weights", w_, dw_}};
    if (s_.use_bias) p.push_back({"biases", b_, db_});
    return p;
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dense::forward(dtype_, x.raw(), x.numel() / in_, in_, w_.raw(), s_.units,
                   s_.use_bias ? b_.raw() : nullptr, y.raw());
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dense::backward(dtype_, x.raw(), dy.raw(), x.numel() / in_, in_, w_.raw(), s_.units, dw_.raw(),
                    s_.use_bias ? db_.raw() : nullptr, dx ? dx->raw() : nullptr);
  }

 private:
  layer_parameters::Fc s_;
  Shape input_;
  std::int64_t in_ = 0;
  DType dtype_ = DType::float32;
  Tensor w_, dw_, b_, db_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaFc(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"units": 7}, "input_nchw": [12]},
    {"params": {"units": 5, "use_bias": false}, "input_nchw": [2, 3, 3]}]})";

DTNN_CUDA_LAYER("fc", "fully connected on an NVIDIA GPU (cuBLAS): y = x w + b",
                dtnn::layer_parameters::kFcParameters, kTwinChecks, create)
