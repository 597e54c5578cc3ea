// cuDNN's softmax as a layer (cuda_softmax, cuda_log_softmax): the accurate form (the maximum
// subtracted first) or the log form, over each sample's values or over each row of the last axis
// (a sequence's [T, classes] is T rows). Backward from y: dx = y (dy - sum dy y), or for the log
// form dx = dy - exp(y) sum dy.
#pragma once
#include <string>

#include "check.hpp"
#include "cuda_plugin.hpp"
#include "descriptors.hpp"

namespace dtnn::cuda {

class SoftmaxLayer final : public Layer {
 public:
  enum class Over { sample, last_axis };
  SoftmaxLayer(std::string type, cudnnSoftmaxAlgorithm_t algorithm, Over over)
      : type_(std::move(type)), algorithm_(algorithm), over_(over) {}
  std::string type() const override { return type_; }
  // A softmax before categorical cross-entropy: the model skips its backward.
  Shape output_shape() const override { return shape_; }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    dtype_ = ctx.dtype;
    width_ = over_ == Over::sample ? shape_.numel() : shape_[shape_.rank() - 1];
  }
  void forward(const Tensor& x, Tensor& y, Mode) override {
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnSoftmaxForward(cx.cudnn(), algorithm_, CUDNN_SOFTMAX_MODE_INSTANCE, s.one(),
                                   desc_, x.raw(), s.zero(), desc_, y.raw()));
  }
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    Context& cx = Context::get();
    set_batch(x.dim(0));
    const Scalars s(dtype_);
    DTNN_CUDNN(cudnnSoftmaxBackward(cx.cudnn(), algorithm_, CUDNN_SOFTMAX_MODE_INSTANCE, s.one(),
                                    desc_, y.raw(), desc_, dy.raw(), s.zero(), desc_, dx->raw()));
  }

 private:
  void set_batch(std::int64_t n) {  // each row one instance: [rows, width, 1, 1]
    if (n == batch_) return;
    batch_ = n;
    desc_.set(n * (shape_.numel() / width_), width_, 1, 1, dtype_);
  }
  std::string type_;
  cudnnSoftmaxAlgorithm_t algorithm_;
  Over over_;
  Shape shape_;
  DType dtype_ = DType::float32;
  std::int64_t width_ = 1, batch_ = -1;
  TensorDesc desc_;
};

}  // namespace dtnn::cuda
