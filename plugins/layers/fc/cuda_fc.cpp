// cuda_fc: fully connected on the GPU through cuBLAS, weights [in, units] row-major as the CPU fc
// keeps them.  y = x w + b;  dw += x^T dy;  db += column sums of dy;  dx = dy w^T.
// cuBLAS is column-major: a row-major [r, c] matrix is its column-major [c, r] transpose, so
// y^T = w^T x^T is gemm(N, N) on (w, x), and so on below.
#include "check.hpp"
#include "cuda_plugin.hpp"
#include "kernels.hpp"
#include "layer_parameters.hpp"
#include "pydtnn_names.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// C = alpha op(A) op(B) + beta C, column-major, in T.
void gemm(cublasHandle_t h, DType dtype, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
          std::int64_t n, std::int64_t k, const void* a, std::int64_t lda, const void* b,
          std::int64_t ldb, double beta, void* c, std::int64_t ldc) {
  const int M = int(m), N = int(n), K = int(k);
  if (dtype == DType::float64) {
    const double one = 1;
    DTNN_CUBLAS(cublasDgemm(h, ta, tb, M, N, K, &one, static_cast<const double*>(a), int(lda),
                            static_cast<const double*>(b), int(ldb), &beta, static_cast<double*>(c),
                            int(ldc)));
  } else {
    const float one = 1, fbeta = float(beta);
    DTNN_CUBLAS(cublasSgemm(h, ta, tb, M, N, K, &one, static_cast<const float*>(a), int(lda),
                            static_cast<const float*>(b), int(ldb), &fbeta, static_cast<float*>(c),
                            int(ldc)));
  }
}

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
    Context& cx = Context::get();
    const std::int64_t n = x.numel() / in_;  // rows
    gemm(cx.cublas(), dtype_, CUBLAS_OP_N, CUBLAS_OP_N, s_.units, n, in_, w_.raw(), s_.units,
         x.raw(), in_, 0.0, y.raw(), s_.units);
    if (s_.use_bias) kernels::add_bias_rows(cx.stream(), y.raw(), b_.raw(), n, s_.units, dtype_);
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    Context& cx = Context::get();
    const std::int64_t n = x.numel() / in_;  // rows
    // dw^T [units, in] += dy^T [units, n] x [n, in]
    gemm(cx.cublas(), dtype_, CUBLAS_OP_N, CUBLAS_OP_T, s_.units, in_, n, dy.raw(), s_.units,
         x.raw(), in_, 1.0, dw_.raw(), s_.units);
    if (s_.use_bias)
      kernels::add_column_sums(cx.stream(), db_.raw(), dy.raw(), n, s_.units, dtype_);
    // dx^T [in, n] = w [in, units] dy^T [units, n]
    if (dx)
      gemm(cx.cublas(), dtype_, CUBLAS_OP_T, CUBLAS_OP_N, in_, n, s_.units, w_.raw(), s_.units,
           dy.raw(), s_.units, 0.0, dx->raw(), in_);
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
