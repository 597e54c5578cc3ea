// cuda_conv2d: conv2d on the GPU through cuDNN, NCHW, weights [K, C, KH, KW] as the CPU conv2d
// keeps them in NCHW (checkpoints move between the two).
//   y = conv(x, w) + b (then relu when "activation" is "relu");  db += sum dy;
//   dw += conv_filter_grad(x, dy);  dx = conv_data_grad(dy, w)
// Algorithms: with gpu.cudnn_auto_conv_alg (PyDTNN's --enable_cudnn_auto_conv_alg) cuDNN's
// search times the candidates once at build and the fastest within the workspace limit is kept;
// otherwise fixed defaults (implicit precomputed GEMM forward, algorithm 1 for both gradients).
// The workspace is the context's shared one, reserved at build. TF32 only with gpu.tf32.
#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "check.hpp"
#include "cuda_plugin.hpp"
#include "descriptors.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaConv2d final : public Layer {
 public:
  explicit CudaConv2d(const Params& p) : params_(p) {
    k_ = p.get_int("filters");
    if (k_ <= 0) p.fail("filters", "a positive number of filters");
    std::tie(kh_, kw_) = p.get_pair("kernel", 1);
    std::tie(sh_, sw_) = p.get_pair("stride", 1);
    std::tie(ph_, pw_) = p.get_pair("padding", 0);
    std::tie(dil_h_, dil_w_) = p.get_pair("dilation", 1);
    use_bias_ = p.get_bool("use_bias");
    const std::string activation = p.get_string("activation");
    relu_ = activation == "relu";
    if (!relu_ && !activation.empty()) p.fail("activation", "\"\" or \"relu\" (conv+relu fused)");
    if (!p.is_null("batchnorm"))
      p.fail("batchnorm", "null: conv2d+batchnorm fusion is a CPU option (fusion.*)");
    check_initializer(p.get_string("weights_initializer"), p.key_path("weights_initializer"));
    check_initializer(p.get_string("biases_initializer"), p.key_path("biases_initializer"));
  }

  std::string type() const override { return "conv2d"; }
  Shape output_shape() const override { return Shape{k_, ho_, wo_}; }
  std::string weights_shape() const override { return w_.shape().str(); }
  std::string attributes() const override {
    auto s = [](std::int64_t v) { return std::to_string(v); };
    return "padding=(" + s(ph_) + "," + s(pw_) + ") stride=(" + s(sh_) + "," + s(sw_) +
           ") dilation=(" + s(dil_h_) + "," + s(dil_w_) + ") cudnn" + (relu_ ? " +relu" : "");
  }
  std::string report() const override {
    return "cuda_conv2d " + std::to_string(in_.c) + "->" + std::to_string(k_) + " " +
           std::to_string(kh_) + "x" + std::to_string(kw_) + ": forward algorithm " +
           std::to_string(forward_algo_) + ", backward-data " + std::to_string(data_algo_) +
           ", backward-filter " + std::to_string(filter_algo_) + ", workspace " +
           std::to_string(workspace_ >> 10) + " KiB";
  }
  std::size_t workspace_bytes() const override { return workspace_; }

  void build(const LayerBuildContext& ctx) override {
    if (ctx.input_shape.rank() != 3)
      throw Error("conv2d expects image input (C, H, W), got " + ctx.input_shape.str());
    in_ = chw_of(ctx, "conv2d");
    ho_ = (in_.h + 2 * ph_ - dil_h_ * (kh_ - 1) - 1) / sh_ + 1;
    wo_ = (in_.w + 2 * pw_ - dil_w_ * (kw_ - 1) - 1) / sw_ + 1;
    if (ho_ < 1 || wo_ < 1) throw Error("kernel larger than the padded input");
    dtype_ = ctx.dtype;
    needs_dx_ = ctx.needs_input_gradient;
    Context& cx = Context::get();
    const std::int64_t window = kh_ * kw_;
    w_ = initialized(Shape{k_, in_.c, kh_, kw_}, dtype_, params_.get_string("weights_initializer"),
                     in_.c * window, k_ * window, ctx.seed);
    dw_ = Tensor::zeros(w_.shape(), dtype_, Layout::nchw, Device::cuda);
    if (use_bias_) {
      b_ = initialized(Shape{k_}, dtype_, params_.get_string("biases_initializer"),
                       in_.c * window, k_ * window, ctx.seed + 1);
      db_ = Tensor::zeros(b_.shape(), dtype_, Layout::nchw, Device::cuda);
      bias_desc_.set(1, k_, 1, 1, dtype_);
    }
    if (relu_) grad_ = Tensor::empty(output_shape().with_batch(ctx.max_batch), dtype_,
                                     Layout::nchw, Device::cuda);
    filter_ = std::make_unique<FilterDesc>(k_, in_.c, kh_, kw_, dtype_);
    conv_ = std::make_unique<ConvDesc>(ph_, pw_, sh_, sw_, dil_h_, dil_w_, dtype_,
                                       cx.options().tf32);
    set_batch(ctx.max_batch);
    choose_algorithms(cx);
    cx.reserve_workspace(workspace_);
  }

  std::vector<Parameter> parameters() override {
    std::vector<Parameter> p{{"weights", w_, dw_}};
    if (use_bias_) p.push_back({"biases", b_, db_});
    return p;
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnConvolutionForward(cx.cudnn(), s.one(), x_desc_, x.raw(), *filter_, w_.raw(),
                                       *conv_, forward_algo_, cx.workspace(),
                                       cx.workspace_bytes(), s.zero(), y_desc_, y.raw()));
    if (use_bias_)
      DTNN_CUDNN(cudnnAddTensor(cx.cudnn(), s.one(), bias_desc_, b_.raw(), s.one(), y_desc_,
                                y.raw()));
    if (relu_)
      DTNN_CUDNN(cudnnActivationForward(cx.cudnn(), relu_desc_, s.one(), y_desc_, y.raw(),
                                        s.zero(), y_desc_, y.raw()));
  }

  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    const void* g = dy.raw();
    if (relu_) {  // dz = dy where y > 0 (y = relu(z) > 0 exactly when z > 0)
      kernels::leaky_relu_backward(cx.stream(), grad_.raw(), y.raw(), dy.raw(),
                                   static_cast<std::size_t>(dy.numel()), dtype_, 0.0);
      g = grad_.raw();
    }
    if (use_bias_)
      DTNN_CUDNN(cudnnConvolutionBackwardBias(cx.cudnn(), s.one(), y_desc_, g, s.one(),
                                              bias_desc_, db_.raw()));
    DTNN_CUDNN(cudnnConvolutionBackwardFilter(cx.cudnn(), s.one(), x_desc_, x.raw(), y_desc_, g,
                                              *conv_, filter_algo_, cx.workspace(),
                                              cx.workspace_bytes(), s.one(), *filter_,
                                              dw_.raw()));
    if (dx)
      DTNN_CUDNN(cudnnConvolutionBackwardData(cx.cudnn(), s.one(), *filter_, w_.raw(), y_desc_, g,
                                              *conv_, data_algo_, cx.workspace(),
                                              cx.workspace_bytes(), s.zero(), x_desc_,
                                              dx->raw()));
  }

 private:
  void set_batch(std::int64_t n) {
    if (n == batch_) return;
    batch_ = n;
    x_desc_.set(n, in_.c, in_.h, in_.w, dtype_);
    y_desc_.set(n, k_, ho_, wo_, dtype_);
  }

  // Whether a search result may be used: it ran, fits the workspace limit, and uses tensor cores
  // only when TF32 is allowed.
  template <class Perf>
  static bool usable(const Perf& p, const Options& o) {
    return p.status == CUDNN_STATUS_SUCCESS && p.memory <= o.workspace_limit &&
           (o.tf32 || p.mathType == CUDNN_FMA_MATH || p.mathType == CUDNN_DEFAULT_MATH);
  }

  void choose_algorithms(Context& cx) {
    const Options& o = cx.options();
    const cudnnHandle_t h = cx.cudnn();
    std::size_t fwd_ws = 0, data_ws = 0, filter_ws = 0;
    if (o.auto_conv) {
      std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> f{};
      std::array<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT> d{};
      std::array<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT> w{};
      int got = 0;
      DTNN_CUDNN(cudnnFindConvolutionForwardAlgorithm(h, x_desc_, *filter_, *conv_, y_desc_,
                                                      int(f.size()), &got, f.data()));
      pick(f.data(), got, o, forward_algo_, fwd_ws, "forward");
      DTNN_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithm(h, x_desc_, y_desc_, *conv_,
                                                             *filter_, int(w.size()), &got,
                                                             w.data()));
      pick(w.data(), got, o, filter_algo_, filter_ws, "backward-filter");
      if (needs_dx_) {
        DTNN_CUDNN(cudnnFindConvolutionBackwardDataAlgorithm(h, *filter_, y_desc_, *conv_,
                                                             x_desc_, int(d.size()), &got,
                                                             d.data()));
        pick(d.data(), got, o, data_algo_, data_ws, "backward-data");
      }
    } else {
      DTNN_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(h, x_desc_, *filter_, *conv_, y_desc_,
                                                         forward_algo_, &fwd_ws));
      DTNN_CUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x_desc_, y_desc_, *conv_,
                                                                *filter_, filter_algo_,
                                                                &filter_ws));
      if (needs_dx_)
        DTNN_CUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h, *filter_, y_desc_, *conv_,
                                                                x_desc_, data_algo_, &data_ws));
    }
    workspace_ = std::max({fwd_ws, data_ws, filter_ws, std::size_t{256}});
  }

  template <class Perf, class Algo>
  void pick(const Perf* results, int count, const Options& o, Algo& algo, std::size_t& memory,
            const char* pass) {
    for (int i = 0; i < count; ++i)  // sorted fastest first
      if (usable(results[i], o)) {
        algo = results[i].algo;
        memory = results[i].memory;
        return;
      }
    throw Error(std::string("cuDNN found no usable ") + pass + " algorithm for this convolution");
  }

  Params params_;
  std::int64_t k_ = 0, kh_ = 3, kw_ = 3, sh_ = 1, sw_ = 1, ph_ = 0, pw_ = 0, dil_h_ = 1, dil_w_ = 1;
  std::int64_t ho_ = 0, wo_ = 0, batch_ = -1;
  Chw in_;
  bool use_bias_ = true, relu_ = false, needs_dx_ = true;
  DType dtype_ = DType::float32;
  Tensor w_, dw_, b_, db_, grad_;
  TensorDesc x_desc_, y_desc_, bias_desc_;
  std::unique_ptr<FilterDesc> filter_;
  std::unique_ptr<ConvDesc> conv_;
  ActivationDesc relu_desc_{CUDNN_ACTIVATION_RELU};
  cudnnConvolutionFwdAlgo_t forward_algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  cudnnConvolutionBwdDataAlgo_t data_algo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  cudnnConvolutionBwdFilterAlgo_t filter_algo_ = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  std::size_t workspace_ = 0;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaConv2d(p); }

}  // namespace

DTNN_CUDA_PLUGIN(
    "layer", "cuda_conv2d", "conv2d on an NVIDIA GPU through cuDNN (NCHW)",
    R"({"filters": 0, "kernel": [3, 3], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
        "use_bias": true, "activation": "", "batchnorm": null,
        "weights_initializer": "glorot_uniform", "biases_initializer": "zeros", "algorithm": ""})",
    create)
