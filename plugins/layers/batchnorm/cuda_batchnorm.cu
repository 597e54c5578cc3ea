// cuda_batchnorm: batch normalisation per channel on the GPU through cuDNN (spatial mode; a
// feature vector is C channels of one pixel). The CPU layer's conventions: biased batch variance,
// running = momentum running + (1 - momentum) batch (Keras's momentum). cuDNN's own running
// update (unbiased variance, the other momentum) is switched off (factor 0) and a dtnn kernel
// applies dtnn's from the batch statistics cuDNN saved.
#include "batchnorm_parameters.hpp"
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

class CudaBatchnorm final : public Layer {
 public:
  explicit CudaBatchnorm(const Params& p) {
    const layer_parameters::Batchnorm s(p);
    momentum_ = s.momentum;
    epsilon_ = s.epsilon;
    gamma_init_ = s.gamma;
    beta_init_ = s.beta;
    if (!(epsilon_ >= CUDNN_BN_MIN_EPSILON))
      p.fail("epsilon", "a number >= " + std::to_string(CUDNN_BN_MIN_EPSILON) + " (cuDNN's least)");
    if (s.sync_stats) p.fail("sync_stats", "false: synchronised statistics are CPU-only");
    if (s.relu) p.fail("activation", "\"\": batchnorm+relu fusion is a CPU option (fusion.*)");
  }

  std::string type() const override { return "batchnorm"; }
  Shape output_shape() const override { return shape_; }
  std::string attributes() const override { return "cudnn"; }

  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    in_ = chw_of(ctx, "batchnorm");
    dtype_ = ctx.dtype;
    const Shape per_channel{in_.c};
    Tensor host = Tensor::empty(per_channel, dtype_);
    auto filled = [&](double v) {
      dispatch_dtype(dtype_, [&](auto z) {
        using T = decltype(z);
        for (std::int64_t c = 0; c < in_.c; ++c) host.data<T>()[c] = T(v);
      });
      return host.to(Device::cuda);
    };
    auto zeros = [&] { return Tensor::zeros(per_channel, dtype_, Layout::nchw, Device::cuda); };
    gamma_ = {"gamma", filled(gamma_init_), zeros()};
    beta_ = {"beta", filled(beta_init_), zeros()};
    running_mean_ = zeros();
    running_var_ = filled(1.0);
    save_mean_ = zeros();
    save_inv_std_ = zeros();
    if (!ctx.needs_input_gradient)  // cuDNN always writes dx
      scratch_dx_ =
          Tensor::empty(shape_.with_batch(ctx.max_batch), dtype_, Layout::nchw, Device::cuda);
    param_desc_.set(1, in_.c, 1, 1, dtype_);
  }

  std::vector<Parameter> parameters() override { return {gamma_, beta_}; }
  void pydtnn_arrays(PydtnnArrays& out, const Shape&) override {
    pydtnn_names::batchnorm(out, parameters(), state());
  }
  std::vector<Tensor> state() override { return {running_mean_, running_var_}; }

  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    if (mode == Mode::eval) {
      DTNN_CUDNN(cudnnBatchNormalizationForwardInference(
          cx.cudnn(), kMode, s.one(), s.zero(), desc_, x.raw(), desc_, y.raw(), param_desc_,
          gamma_.value.raw(), beta_.value.raw(), running_mean_.raw(), running_var_.raw(),
          epsilon_));
      return;
    }
    DTNN_CUDNN(cudnnBatchNormalizationForwardTraining(
        cx.cudnn(), kMode, s.one(), s.zero(), desc_, x.raw(), desc_, y.raw(), param_desc_,
        gamma_.value.raw(), beta_.value.raw(), 0.0, running_mean_.raw(), running_var_.raw(),
        epsilon_, save_mean_.raw(), save_inv_std_.raw()));
    by_dtype(dtype_, [&](auto z) {
      using T = decltype(z);
      running_update_kernel<<<unsigned((in_.c + kThreads - 1) / kThreads), kThreads, 0,
                              cx.stream()>>>(
          static_cast<T*>(running_mean_.raw()), static_cast<T*>(running_var_.raw()),
          static_cast<const T*>(save_mean_.raw()), static_cast<const T*>(save_inv_std_.raw()),
          in_.c, momentum_, epsilon_);
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
        epsilon_, save_mean_.raw(), save_inv_std_.raw()));
  }

 private:
  void set_batch(std::int64_t n) {
    if (n == batch_) return;
    batch_ = n;
    desc_.set(n, in_.c, in_.h, in_.w, dtype_);
  }

  double momentum_ = 0, epsilon_ = 0, gamma_init_ = 1, beta_init_ = 0;
  Shape shape_;
  Chw in_;
  DType dtype_ = DType::float32;
  Parameter gamma_, beta_;
  Tensor running_mean_, running_var_, save_mean_, save_inv_std_, scratch_dx_;
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
