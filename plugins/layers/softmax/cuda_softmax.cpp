// cuda_softmax: softmax over each sample on the GPU through cuDNN (accurate mode: the maximum is
// subtracted first). Before categorical cross-entropy the model skips its backward and the loss
// gives the gradient of the logits directly.
#include "check.hpp"
#include "cuda_plugin.hpp"
#include "descriptors.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaSoftmax final : public Layer {
 public:
  std::string type() const override { return "softmax"; }
  bool is_softmax() const override { return true; }
  Shape output_shape() const override { return shape_; }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    dtype_ = ctx.dtype;
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnSoftmaxForward(cx.cudnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                                   s.one(), desc_, x.raw(), s.zero(), desc_, y.raw()));
  }
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnSoftmaxBackward(cx.cudnn(), CUDNN_SOFTMAX_ACCURATE, CUDNN_SOFTMAX_MODE_INSTANCE,
                                    s.one(), desc_, y.raw(), desc_, dy.raw(), s.zero(), desc_,
                                    dx->raw()));
  }

 private:
  void set_batch(std::int64_t n) {  // each sample one row: [n, features, 1, 1]
    if (n == batch_) return;
    batch_ = n;
    desc_.set(n, shape_.numel(), 1, 1, dtype_);
  }
  Shape shape_;
  DType dtype_ = DType::float32;
  TensorDesc desc_;
  std::int64_t batch_ = -1;
};

Plugin* create(const Params&, const PluginContext&) { return new CudaSoftmax(); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"input_nchw": [10]}]})";

DTNN_CUDA_LAYER("softmax", "softmax over each sample on an NVIDIA GPU (cuDNN)", "{}", kTwinChecks,
                create)
