// cuda_fc: fully connected on the GPU through cuBLAS (cuda_dense.hpp), weights [in, units]
// row-major as the CPU fc keeps them.  y = x w + b;  dw += x^T dy;  db += column sums of dy;
// dx = dy w^T.
#include "check.hpp"
#include "cuda_dense.hpp"
#include "cuda_plugin.hpp"
#include "fc_base.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaFc final : public layer_parameters::FcBase {
 public:
  explicit CudaFc(const Params& p) : FcBase(p) {
    if (s_.gelu) p.fail("gelu", "null: the CUDA fc fuses no gelu (a gelu layer after it runs)");
  }
  std::string attributes() const override { return "cublas"; }

  void build(const LayerBuildContext& ctx) override {
    build_weights(ctx, Device::cuda);
    dtype_ = ctx.dtype;
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dense::forward(dtype_, x.raw(), rows(x), in_, w_.raw(), s_.units,
                   s_.use_bias ? b_.raw() : nullptr, y.raw());
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dense::backward(dtype_, x.raw(), dy.raw(), rows(x), in_, w_.raw(), s_.units, dw_.raw(),
                    s_.use_bias ? db_.raw() : nullptr, dx ? dx->raw() : nullptr);
  }

 private:
  DType dtype_ = DType::float32;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaFc(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"units": 7}, "input_nchw": [12]},
    {"params": {"units": 5, "use_bias": false}, "input_nchw": [2, 3, 3]}]})";

DTNN_CUDA_LAYER("fc", "fully connected on an NVIDIA GPU (cuBLAS): y = x w + b",
                dtnn::layer_parameters::kFcParameters, kTwinChecks, create)
