#include "dtnn/model.hpp"

#include <algorithm>
#include <chrono>

#include "dtnn/conv_options.hpp"
#include "dtnn/device.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer_chain.hpp"
#include "dtnn/layer_profile.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/rng.hpp"

namespace dtnn {

Model::Model(const ModelSpec& spec, const ModelOptions& options, const Shape& input_shape,
             const Registry& registry)
    : name_(spec.name), options_(options), input_shape_(input_shape) {
  if (options.saved_activations != Precision::fp32 &&
      (options.saved_activations != Precision::bf16 || options.dtype != DType::float32 ||
       options.device != Device::cpu))
    throw Error(std::string("activations saved in ") + to_string(options.saved_activations) +
                ": only bf16, of float32 tensors on the cpu");
  if (spec.input_shape) {
    Shape expected = *spec.input_shape;  // HWC as written
    if (options.layout == Layout::nchw && expected.rank() == 3)
      expected = Shape{expected[2], expected[0], expected[1]};
    // A sequence of vectors (T, D) from a dataset of one-channel images (T, D, 1), as an .npz
    // array (N, T, D) reads: the same values in the same order in both layouts.
    const bool one_channel =
        input_shape.rank() == 3 && input_shape[options.layout == Layout::nhwc ? 2 : 0] == 1;
    if (expected.rank() == 2 && one_channel && expected.numel() == input_shape.numel())
      input_shape_ = expected;
    else if (!(expected == input_shape))
      throw Error((spec.file.empty() ? std::string("model") : spec.file.string()) +
                  ": input_shape " + spec.input_shape->str() +
                  " does not match the dataset's samples " + input_shape.str());
  }
  if (options.shared_workspace) workspace_ = std::make_unique<Workspace>();
  LayerBuildContext ctx;
  ctx.input_shape = input_shape_;
  ctx.dtype = options.dtype;
  ctx.precision = options.precision;
  ctx.saved_activations = options.saved_activations;
  ctx.layout = options.layout;
  ctx.device = options.device;
  ctx.device_params = options.device_params;
  ctx.max_batch = options.max_batch;
  ctx.seed = options.seed;
  ctx.registry = &registry;
  ctx.extensions.set(
      std::make_shared<ConvOptions>(ConvOptions{options.conv_algorithm, options.conv_params}));
  ctx.communicator = options.communicator;
  ctx.workspace = workspace_.get();
  ctx.gradient_buffers = &gradient_buffers_;
  ctx.needs_input_gradient = false;  // the data needs no gradient
  ctx.fusions = options.fusions;
  chain_.build(spec.layers, ctx);
  parameters_ = chain_.parameters();
  const PluginRecord* last =
      registry.find("layer", chain_.layer(chain_.size() - 1).type(), options.device);
  ends_in_softmax_ = last && last->traits.softmax;
  dy_ = Tensor::empty(output_shape().with_batch(options.max_batch), options.dtype, options.layout,
                      options.device);
}

Shape Model::output_shape() const { return chain_.output_shape(); }

std::int64_t Model::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : parameters_) n += p.value.numel();
  return n;
}

const Tensor& Model::forward(const Tensor& x, Mode mode) { return forward(x, mode, {}); }

const Tensor& Model::forward(const Tensor& x, Mode mode,
                             const std::function<void(std::size_t)>& after_layer) {
  DTNN_CHECK(x.dim(0) <= options_.max_batch, "batch above the model's max_batch");
  if (x.shape().rank() != input_shape_.rank() + 1)  // (T, D, 1) samples for a (T, D) input
    return chain_.forward(x.view(input_shape_.with_batch(x.dim(0))), mode, after_layer);
  return chain_.forward(x, mode, after_layer);
}

void Model::set_profiling(bool on) { layer_profile::enable(on, options_.device); }

void Model::zero_grad() {
  for (auto& p : parameters_) p.grad.fill_zero();
}

// dLoss/d(output) from the loss, then the chain; with a softmax last and a loss that offers it,
// dLoss/d(softmax input) directly, and the softmax runs no backward.
void Model::backward(Loss& loss, const Tensor& y_true, GradientListener* listener,
                     double gradient_scale) {
  const std::size_t last = chain_.size() - 1;
  const Tensor& out = chain_.output(last);
  Tensor dy = dy_.slice_batch(0, out.dim(0)).view(out.shape());
  const bool through_softmax = ends_in_softmax_ && loss.has_softmax_gradient();
  if (through_softmax)
    loss.backward_through_softmax(out, y_true, dy);
  else
    loss.backward(out, y_true, dy);
  if (gradient_scale != 1.0) {
    DTNN_CHECK(dy.device() == Device::cpu, "loss scaling needs the model on the cpu");
    dispatch_dtype(dy.dtype(), [&](auto z) {
      using T = decltype(z);
      T* __restrict g = dy.data<T>();
      const auto s = static_cast<T>(gradient_scale);
      const std::int64_t n = dy.numel();
      for (std::int64_t i = 0; i < n; ++i) g[i] *= s;
    });
  }
  chain_.backward(dy, nullptr, listener, through_softmax ? last : chain_.size());
}

}  // namespace dtnn
