// cuda_conv2d_transpose: the CPU layer's transposed convolution on the GPU through cuDNN, NCHW, the
// same filter ([in, out, KH, KW]: G's). It is convolution G's passes exchanged, as on the CPU:
//   y = G's backward-data(x, w);  dx = G's forward(dy, w);  dw += G's backward-filter(dy, x);
// the bias added per output channel, its gradient summed by cuDNN. Each pass's algorithm is
// cuDNN's heuristic pick (cudnnGet*_v7's list, taken as cuda_conv_choice.hpp takes a list).
#include <array>

#include "check.hpp"
#include "conv2d_transpose_base.hpp"
#include "cuda_conv_choice.hpp"
#include "cuda_plugin.hpp"
#include "descriptors.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaConv2dTranspose final : public layer_parameters::Conv2dTransposeBase {
 public:
  using Conv2dTransposeBase::Conv2dTransposeBase;
  std::string attributes() const override { return g_.window_str() + " cudnn"; }

  void build(const LayerBuildContext& ctx) override {
    chw_of(ctx, "conv2d_transpose");  // refuses NHWC by name
    build_weights(ctx, Layout::nchw, Device::cuda);
    Context& cx = Context::get();
    if (s_.use_bias) bias_desc_.set(1, g_.c, 1, 1, g_.dtype);
    filter_ = std::make_unique<FilterDesc>(g_.k, g_.c, g_.kh, g_.kw, g_.dtype);
    conv_ = std::make_unique<ConvDesc>(g_.pad_h, g_.pad_w, g_.stride_h, g_.stride_w, g_.dilation_h,
                                       g_.dilation_w, g_.dtype, cx.options().tf32);
    set_batch(ctx.max_batch);
    choose_algorithms(cx);
    cx.reserve_workspace(workspace_);
  }
  // G's input is this layer's output (big_desc_), G's output this layer's input (small_desc_).
  void forward(const Tensor& x, Tensor& y, Mode) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(g_.dtype);
    conv_->set_math(data_math_);
    DTNN_CUDNN(cudnnConvolutionBackwardData(cx.cudnn(), s.one(), *filter_, w_.raw(), small_desc_,
                                            x.raw(), *conv_, data_algo_, cx.workspace(),
                                            cx.workspace_bytes(), s.zero(), big_desc_, y.raw()));
    if (s_.use_bias)
      DTNN_CUDNN(
          cudnnAddTensor(cx.cudnn(), s.one(), bias_desc_, b_.raw(), s.one(), big_desc_, y.raw()));
  }

  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(g_.dtype);
    if (s_.use_bias)
      DTNN_CUDNN(cudnnConvolutionBackwardBias(cx.cudnn(), s.one(), big_desc_, dy.raw(), s.one(),
                                              bias_desc_, db_.raw()));
    if (dx) {
      conv_->set_math(forward_math_);
      DTNN_CUDNN(cudnnConvolutionForward(cx.cudnn(), s.one(), big_desc_, dy.raw(), *filter_,
                                         w_.raw(), *conv_, forward_algo_, cx.workspace(),
                                         cx.workspace_bytes(), s.zero(), small_desc_, dx->raw()));
    }
    conv_->set_math(filter_math_);
    DTNN_CUDNN(cudnnConvolutionBackwardFilter(cx.cudnn(), s.one(), big_desc_, dy.raw(), small_desc_,
                                              x.raw(), *conv_, filter_algo_, cx.workspace(),
                                              cx.workspace_bytes(), s.one(), *filter_, dw_.raw()));
  }

 private:
  void set_batch(std::int64_t n) {
    if (n == batch_) return;
    batch_ = n;
    big_desc_.set(n, g_.c, g_.h, g_.w, g_.dtype);
    small_desc_.set(n, g_.k, g_.ho(), g_.wo(), g_.dtype);
  }

  template <class Perf, class Algo>
  void pick(const Perf* results, int count, const Options& o, Algo& algo, cudnnMathType_t& math,
            std::size_t& memory, const char* pass) {
    if (!pick_conv_algorithm(results, count, o, g_.dtype, algo, math, memory))
      throw Error(std::string("conv2d_transpose: cuDNN offers no usable ") + pass +
                  " algorithm for " + g_.str());
  }

  void choose_algorithms(Context& cx) {
    const Options& o = cx.options();
    const cudnnHandle_t h = cx.cudnn();
    std::size_t data_ws = 0, forward_ws = 0, filter_ws = 0;
    int got = 0;
    std::array<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT> d{};
    DTNN_CUDNN(cudnnGetConvolutionBackwardDataAlgorithm_v7(
        h, *filter_, small_desc_, *conv_, big_desc_, int(d.size()), &got, d.data()));
    pick(d.data(), got, o, data_algo_, data_math_, data_ws, "backward-data (its forward)");
    std::array<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT> f{};
    DTNN_CUDNN(cudnnGetConvolutionForwardAlgorithm_v7(h, big_desc_, *filter_, *conv_, small_desc_,
                                                      int(f.size()), &got, f.data()));
    pick(f.data(), got, o, forward_algo_, forward_math_, forward_ws,
         "forward (its input gradient)");
    std::array<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT> w{};
    DTNN_CUDNN(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
        h, big_desc_, small_desc_, *conv_, *filter_, int(w.size()), &got, w.data()));
    pick(w.data(), got, o, filter_algo_, filter_math_, filter_ws, "backward-filter");
    workspace_ = std::max({data_ws, forward_ws, filter_ws, std::size_t{256}});
  }

  std::int64_t batch_ = -1;
  TensorDesc big_desc_, small_desc_, bias_desc_;
  std::unique_ptr<FilterDesc> filter_;
  std::unique_ptr<ConvDesc> conv_;
  cudnnConvolutionBwdDataAlgo_t data_algo_ = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
  cudnnConvolutionFwdAlgo_t forward_algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  cudnnConvolutionBwdFilterAlgo_t filter_algo_ = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
  cudnnMathType_t data_math_ = CUDNN_FMA_MATH, forward_math_ = CUDNN_FMA_MATH,
                  filter_math_ = CUDNN_FMA_MATH;
  std::size_t workspace_ = 0;
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaConv2dTranspose(p); }

}  // namespace

// The CPU layer's cases (channels first): strided, padded with output padding, a non-square
// kernel.
constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"filters": 3, "kernel": 2, "stride": 2}, "input_nchw": [2, 3, 4]},
    {"params": {"filters": 2, "kernel": 3, "stride": 2, "padding": 1, "output_padding": 1},
     "input_nchw": [3, 3, 3]},
    {"params": {"filters": 4, "kernel": [3, 2], "padding": 1}, "input_nchw": [2, 4, 3]}]})";

DTNN_CUDA_LAYER("conv2d_transpose",
                "transposed 2-D convolution on an NVIDIA GPU (cuDNN): a convolution's passes "
                "exchanged",
                dtnn::layer_parameters::kConv2dTransposeParameters, kTwinChecks, create)
