// A cuDNN convolution as a layer: cuda_conv2d and cuda_depthwise_conv2d (a grouped convolution,
// one group per channel), NCHW, weights as the CPU plugins keep them in NCHW ([K, C, KH, KW];
// depthwise [C, KH, KW]) so that checkpoints move between CPU and GPU runs.
//   y = conv(x, w) + b (then relu when "activation" is "relu");  db += sum dy;
//   dw += conv_filter_grad(x, dy);  dx = conv_data_grad(dy, w)
// Algorithms: with gpu.cudnn_auto_conv_alg (PyDTNN's --enable_cudnn_auto_conv_alg) cuDNN's
// search times the candidates once at build and the fastest within the workspace limit
// (gpu.cudnn_workspace_mb; by default an eighth of the GPU's memory) is kept,
// each pass then running with the math type its result was timed with; otherwise fixed defaults
// (implicit precomputed GEMM forward, algorithm 1 for both gradients). The workspace is the
// context's shared one, reserved at build. TF32 only with gpu.tf32: without it a float32 pass
// takes only results of FMA math (cuDNN's default math lets TF32 tensor cores in on Ampere and
// later, and a search that timed such a result picks an algorithm FMA math then runs slowly).
#pragma once
#include <algorithm>
#include <array>
#include <memory>
#include <string>

#include "check.hpp"
#include "conv_base.hpp"
#include "cuda_conv_choice.hpp"
#include "cuda_plugin.hpp"
#include "descriptors.hpp"
#include "dtnn/conv_algorithm.hpp"
#include "kernels.hpp"

namespace dtnn::cuda {

class ConvLayer final : public layer_parameters::ConvBase {
 public:
  // depthwise: depthwise_conv2d's parameters, else conv2d's, read as the CPU plugins read them.
  ConvLayer(const Params& p, bool depthwise) : ConvBase(p, depthwise) {
    if (depthwise) return;
    if (g_.groups != 1) p.fail("groups", "1 on cuda (grouped convolutions run on the cpu)");
    if (!p.is_null("batchnorm"))
      p.fail("batchnorm", "null: conv2d+batchnorm fusion is a CPU option (fusion.*)");
  }

  std::string attributes() const override {
    return g_.window_str() + " cudnn" + (relu_ ? " +relu" : "");
  }
  std::string report() const override {
    return "cuda_" + type() + " " + g_.str() + ": forward algorithm " +
           choice(forward_algo_, forward_math_) + ", backward-data " +
           choice(data_algo_, data_math_) + ", backward-filter " +
           choice(filter_algo_, filter_math_) + ", workspace " + std::to_string(workspace_ >> 10) +
           " KiB";
  }
  std::size_t workspace_bytes() const override { return workspace_; }

  void build(const LayerBuildContext& ctx) override {
    chw_of(ctx, type());  // refuses NHWC by name
    build_geometry(ctx, Layout::nchw);
    build_weights(ctx, Device::cuda);
    needs_dx_ = ctx.needs_input_gradient;
    Context& cx = Context::get();
    if (use_bias_) bias_desc_.set(1, g_.k, 1, 1, g_.dtype);
    if (relu_)
      grad_ = Tensor::empty(output_shape().with_batch(ctx.max_batch), g_.dtype, Layout::nchw,
                            Device::cuda);
    filter_ = std::make_unique<FilterDesc>(g_.k, g_.c / groups(), g_.kh, g_.kw, g_.dtype);
    conv_ = std::make_unique<ConvDesc>(g_.pad_h, g_.pad_w, g_.stride_h, g_.stride_w, g_.dilation_h,
                                       g_.dilation_w, g_.dtype, cx.options().tf32, groups());
    forward_math_ = data_math_ = filter_math_ = cx.options().tf32 && g_.dtype == DType::float32
                                                    ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
                                                    : CUDNN_FMA_MATH;
    set_batch(ctx.max_batch);
    choose_algorithms(cx);
    cx.reserve_workspace(workspace_);
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(g_.dtype);
    conv_->set_math(forward_math_);
    DTNN_CUDNN(cudnnConvolutionForward(cx.cudnn(), s.one(), x_desc_, x.raw(), *filter_, w_.raw(),
                                       *conv_, forward_algo_, cx.workspace(), cx.workspace_bytes(),
                                       s.zero(), y_desc_, y.raw()));
    if (use_bias_)
      DTNN_CUDNN(
          cudnnAddTensor(cx.cudnn(), s.one(), bias_desc_, b_.raw(), s.one(), y_desc_, y.raw()));
    if (relu_)
      DTNN_CUDNN(cudnnActivationForward(cx.cudnn(), relu_desc_, s.one(), y_desc_, y.raw(), s.zero(),
                                        y_desc_, y.raw()));
  }

  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(g_.dtype);
    const void* g = dy.raw();
    if (relu_) {  // dz = dy where y > 0 (y = relu(z) > 0 exactly when z > 0)
      kernels::leaky_relu_backward(cx.stream(), grad_.raw(), y.raw(), dy.raw(),
                                   static_cast<std::size_t>(dy.numel()), g_.dtype, 0.0);
      g = grad_.raw();
    }
    if (use_bias_)
      DTNN_CUDNN(cudnnConvolutionBackwardBias(cx.cudnn(), s.one(), y_desc_, g, s.one(), bias_desc_,
                                              db_.raw()));
    conv_->set_math(filter_math_);
    DTNN_CUDNN(cudnnConvolutionBackwardFilter(cx.cudnn(), s.one(), x_desc_, x.raw(), y_desc_, g,
                                              *conv_, filter_algo_, cx.workspace(),
                                              cx.workspace_bytes(), s.one(), *filter_, dw_.raw()));
    if (dx) {
      conv_->set_math(data_math_);
      DTNN_CUDNN(cudnnConvolutionBackwardData(cx.cudnn(), s.one(), *filter_, w_.raw(), y_desc_, g,
                                              *conv_, data_algo_, cx.workspace(),
                                              cx.workspace_bytes(), s.zero(), x_desc_, dx->raw()));
    }
  }

 private:
  void set_batch(std::int64_t n) {
    if (n == batch_) return;
    batch_ = n;
    x_desc_.set(n, g_.c, g_.h, g_.w, g_.dtype);
    y_desc_.set(n, g_.k, g_.ho(), g_.wo(), g_.dtype);
  }

  // "1 (fma)": an algorithm and the math it runs with.
  static std::string choice(int algo, cudnnMathType_t math) {
    const char* name = math == CUDNN_FMA_MATH                          ? "fma"
                       : math == CUDNN_DEFAULT_MATH                    ? "default math"
                       : math == CUDNN_TENSOR_OP_MATH                  ? "tensor ops"
                       : math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ? "tensor ops, tf32"
                                                                       : "?";
    return std::to_string(algo) + " (" + name + ")";
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
      pick(f.data(), got, o, forward_algo_, forward_math_, fwd_ws, "forward");
      DTNN_CUDNN(cudnnFindConvolutionBackwardFilterAlgorithm(h, x_desc_, y_desc_, *conv_, *filter_,
                                                             int(w.size()), &got, w.data()));
      pick(w.data(), got, o, filter_algo_, filter_math_, filter_ws, "backward-filter");
      if (needs_dx_) {
        DTNN_CUDNN(cudnnFindConvolutionBackwardDataAlgorithm(h, *filter_, y_desc_, *conv_, x_desc_,
                                                             int(d.size()), &got, d.data()));
        pick(d.data(), got, o, data_algo_, data_math_, data_ws, "backward-data");
      }
    } else {
      DTNN_CUDNN(cudnnGetConvolutionForwardWorkspaceSize(h, x_desc_, *filter_, *conv_, y_desc_,
                                                         forward_algo_, &fwd_ws));
      DTNN_CUDNN(cudnnGetConvolutionBackwardFilterWorkspaceSize(
          h, x_desc_, y_desc_, *conv_, *filter_, filter_algo_, &filter_ws));
      if (needs_dx_)
        DTNN_CUDNN(cudnnGetConvolutionBackwardDataWorkspaceSize(h, *filter_, y_desc_, *conv_,
                                                                x_desc_, data_algo_, &data_ws));
    }
    workspace_ = std::max({fwd_ws, data_ws, filter_ws, std::size_t{256}});
  }

  template <class Perf, class Algo>
  void pick(const Perf* results, int count, const Options& o, Algo& algo, cudnnMathType_t& math,
            std::size_t& memory, const char* pass) {
    if (!pick_conv_algorithm(results, count, o, g_.dtype, algo, math, memory))
      throw Error(std::string("cuDNN found no usable ") + pass + " algorithm for this convolution");
  }

  std::int64_t batch_ = -1;
  bool needs_dx_ = true;
  Tensor grad_;
  TensorDesc x_desc_, y_desc_, bias_desc_;
  std::unique_ptr<FilterDesc> filter_;
  std::unique_ptr<ConvDesc> conv_;
  ActivationDesc relu_desc_{CUDNN_ACTIVATION_RELU};
  cudnnConvolutionFwdAlgo_t forward_algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  cudnnConvolutionBwdDataAlgo_t data_algo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  cudnnConvolutionBwdFilterAlgo_t filter_algo_ = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  // Each pass's math: the descriptor's own (FMA, or TF32 conversions with gpu.tf32) until the
  // search picks.
  cudnnMathType_t forward_math_ = CUDNN_FMA_MATH, data_math_ = CUDNN_FMA_MATH,
                  filter_math_ = CUDNN_FMA_MATH;
  std::size_t workspace_ = 0;
};

}  // namespace dtnn::cuda
