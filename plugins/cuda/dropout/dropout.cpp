// cuda_dropout: inverted dropout on the GPU. Training: y = x keep / (1 - rate), keep ~
// Bernoulli(1 - rate) per element from a counter-based hash of (seed, step, element); evaluation:
// y = x. As the CPU layer, a new mask is drawn by the first training forward after a backward, so
// forwards within a step see the same mask. The masks differ from the CPU layer's (another
// generator); their statistics do not.
#include <cuda_runtime_api.h>

#include "../../layers/common/layer_settings.hpp"
#include "check.hpp"
#include "cuda_plugin.hpp"
#include "dtnn/rng.hpp"
#include "kernels.hpp"

namespace {

using namespace dtnn;
using namespace dtnn::cuda;

class CudaDropout final : public Layer {
 public:
  explicit CudaDropout(const Params& p) : rate_(layer_settings::dropout_rate(p)) {}
  std::string type() const override { return "dropout"; }
  Shape output_shape() const override { return shape_; }
  std::string attributes() const override { return "rate=" + std::to_string(rate_).substr(0, 4); }
  void build(const LayerBuildContext& ctx) override {
    shape_ = ctx.input_shape;
    dtype_ = ctx.dtype;
    seed_ = ctx.seed;
    keep_ = Context::get().allocate(static_cast<std::size_t>(shape_.numel() * ctx.max_batch));
  }
  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    Context& cx = Context::get();
    if (mode == Mode::eval || rate_ == 0.0) {
      if (y.raw() != x.raw())
        DTNN_CUDA(cudaMemcpyAsync(y.raw(), x.raw(), x.bytes(), cudaMemcpyDeviceToDevice,
                                  cx.stream()));
      return;
    }
    if (fresh_mask_) {  // a new step
      ++step_;
      fresh_mask_ = false;
    }
    kernels::dropout_forward(cx.stream(), y.raw(), x.raw(), mask(), std::size_t(x.numel()),
                             dtype_, rate_, Rng::derive(seed_, step_));
  }
  void backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor* dx) override {
    fresh_mask_ = true;
    if (!dx) return;
    kernels::dropout_backward(Context::get().stream(), dx->raw(), dy.raw(), mask(),
                              std::size_t(dy.numel()), dtype_, rate_);
  }

 private:
  std::uint8_t* mask() const { return reinterpret_cast<std::uint8_t*>(keep_.get()); }
  double rate_;
  Shape shape_;
  DType dtype_ = DType::float32;
  std::uint64_t seed_ = 0, step_ = 0;
  bool fresh_mask_ = true;
  std::shared_ptr<std::byte> keep_;  // one byte per element of the largest batch
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaDropout(p); }

}  // namespace

DTNN_CUDA_PLUGIN("layer", "cuda_dropout",
                 "inverted dropout on an NVIDIA GPU: zeroes a fraction 'rate' of values in training",
                 dtnn::layer_settings::kDropoutParameters, create)
