// cuda_batchnorm: batch normalisation per channel on the GPU through cuDNN (spatial mode; a
// feature vector is C channels of one pixel). The CPU layer's conventions: biased batch variance,
// running = momentum running + (1 - momentum) batch (Keras's momentum). cuDNN's own running
// update (unbiased variance, the other momentum) is switched off (factor 0) and a dtnn kernel
// applies dtnn's from the batch statistics cuDNN saved.
#include "batchnorm_base.hpp"
#include "check.hpp"
#include "cuda_plugin.hpp"
#include "descriptors.hpp"
#include "launch.cuh"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

// running = momentum running + (1 - momentum) batch, for the mean and the biased variance, from
// cuDNN's saved batch mean and inverse standard deviation (var = 1/inv_std^2 - epsilon). cuDNN
// keeps the saved statistics as float for float32 data and double for float64, as T.
template <class T>
__global__ void running_update_kernel(T* rm, T* rv, const T* mean, const T* inv_std, std::int64_t c,
                                      double momentum, double epsilon) {
  const std::int64_t k = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x;
  if (k >= c) return;
  const double is = double(inv_std[k]);
  const double var = 1.0 / (is * is) - epsilon;
  rm[k] = T(momentum * double(rm[k]) + (1 - momentum) * double(mean[k]));
  rv[k] = T(momentum * double(rv[k]) + (1 - momentum) * (var > 0 ? var : 0.0));
}

constexpr cudnnBatchNormMode_t kMode = CUDNN_BATCHNORM_SPATIAL;

class CudaBatchnorm final : public layer_parameters::BatchnormBase {
 public:
  explicit CudaBatchnorm(const Params& p) : BatchnormBase(layer_parameters::Batchnorm(p)) {
    if (!(s_.epsilon >= CUDNN_BN_MIN_EPSILON))
      p.fail("epsilon", "a number >= " + std::to_string(CUDNN_BN_MIN_EPSILON) + " (cuDNN's least)");
    if (s_.sync_stats) p.fail("sync_stats", "false: synchronised statistics are CPU-only");
    if (s_.relu) p.fail("activation", "\"\": batchnorm+relu fusion is a CPU option (fusion.*)");
  }

  std::string attributes() const override { return "cudnn"; }

  void build(const LayerBuildContext& ctx) override {
    in_ = chw_of(ctx, "batchnorm");
    dtype_ = ctx.dtype;
    build_parameters(ctx, in_.c, Device::cuda);
    save_mean_ = Tensor::zeros(Shape{in_.c}, dtype_, Layout::nchw, Device::cuda);
    save_inv_std_ = Tensor::zeros(Shape{in_.c}, dtype_, Layout::nchw, Device::cuda);
    if (!ctx.needs_input_gradient)  // cuDNN always writes dx
      scratch_dx_ =
          Tensor::empty(shape_.with_batch(ctx.max_batch), dtype_, Layout::nchw, Device::cuda);
    param_desc_.set(1, in_.c, 1, 1, dtype_);
  }

  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    if (mode == Mode::eval) {
      DTNN_CUDNN(cudnnBatchNormalizationForwardInference(
          cx.cudnn(), kMode, s.one(), s.zero(), desc_, x.raw(), desc_, y.raw(), param_desc_,
          gamma_.value.raw(), beta_.value.raw(), running_mean_.raw(), running_var_.raw(),
          s_.epsilon));
      return;
    }
    DTNN_CUDNN(cudnnBatchNormalizationForwardTraining(
        cx.cudnn(), kMode, s.one(), s.zero(), desc_, x.raw(), desc_, y.raw(), param_desc_,
        gamma_.value.raw(), beta_.value.raw(), 0.0, running_mean_.raw(), running_var_.raw(),
        s_.epsilon, save_mean_.raw(), save_inv_std_.raw()));
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      running_update_kernel<<<unsigned((in_.c + kThreads - 1) / kThreads), kThreads, 0,
                              cx.stream()>>>(
          static_cast<T*>(running_mean_.raw()), static_cast<T*>(running_var_.raw()),
          static_cast<const T*>(save_mean_.raw()), static_cast<const T*>(save_inv_std_.raw()),
          in_.c, s_.momentum, s_.epsilon);
    });
    check_launch();
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    void* dx_out = dx ? dx->raw() : scratch_dx_.raw();
    // Parameter gradients accumulate (beta 1), dx is overwritten (beta 0).
    DTNN_CUDNN(cudnnBatchNormalizationBackward(
        cx.cudnn(), kMode, s.one(), s.zero(), s.one(), s.one(), desc_, x.raw(), desc_, dy.raw(),
        desc_, dx_out, param_desc_, gamma_.value.raw(), gamma_.grad.raw(), beta_.grad.raw(),
        s_.epsilon, save_mean_.raw(), save_inv_std_.raw()));
  }

 private:
  void set_batch(std::int64_t n) {
    if (n == batch_) return;
    batch_ = n;
    desc_.set(n, in_.c, in_.h, in_.w, dtype_);
  }

  Chw in_;
  DType dtype_ = DType::float32;
  Tensor save_mean_, save_inv_std_, scratch_dx_;
  TensorDesc desc_, param_desc_;
  std::int64_t batch_ = -1;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaBatchnorm(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [4, 5, 5]},
    {"params": {"momentum": 0.5}, "input_nchw": [6]}]})";

DTNN_CUDA_LAYER("batchnorm",
                "batch normalisation per channel on an NVIDIA GPU (cuDNN), running statistics",
                dtnn::layer_parameters::kBatchnormParameters, kTwinChecks, create)
