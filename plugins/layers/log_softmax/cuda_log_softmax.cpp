// cuda_log_softmax: the logarithm of the softmax over the last axis on the GPU, through cuDNN's
// log mode (the maximum subtracted first); backward dx = dy - softmax(x) sum dy, as the CPU
// layer. A sample of one axis is one row; a sequence's [T, classes] is T rows.
#include "check.hpp"
#include "cuda_plugin.hpp"
#include "descriptors.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaLogSoftmax final : public Layer {
 public:
  std::string type() const override { return "log_softmax"; }
  Shape output_shape() const override { return shape_; }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    dtype_ = ctx.dtype;
    width_ = shape_[shape_.rank() - 1];
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnSoftmaxForward(cx.cudnn(), CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_INSTANCE,
                                   s.one(), desc_, x.raw(), s.zero(), desc_, y.raw()));
  }
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnSoftmaxBackward(cx.cudnn(), CUDNN_SOFTMAX_LOG, CUDNN_SOFTMAX_MODE_INSTANCE,
                                    s.one(), desc_, y.raw(), desc_, dy.raw(), s.zero(), desc_,
                                    dx->raw()));
  }

 private:
  void set_batch(std::int64_t n) {  // each row of the last axis one instance: [rows, width, 1, 1]
    if (n == batch_) return;
    batch_ = n;
    desc_.set(n * (shape_.numel() / width_), width_, 1, 1, dtype_);
  }
  Shape shape_;
  DType dtype_ = DType::float32;
  std::int64_t width_ = 1, batch_ = -1;
  TensorDesc desc_;
};

Plugin* create(const Params&, const PluginContext&) { return new CudaLogSoftmax(); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [7]},
    {"input_nchw": [4, 5], "input_range": [-6, 6]}]})";

DTNN_CUDA_LAYER("log_softmax",
                "logarithm of the softmax over the last axis on an NVIDIA GPU "
                "(cuDNN)",
                "{}", kTwinChecks, create)
