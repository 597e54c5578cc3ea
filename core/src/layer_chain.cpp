#include "dtnn/layer_chain.hpp"

#include <algorithm>

#include "dtnn/device.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer_profile.hpp"
#include "dtnn/model_spec.hpp"
#include "dtnn/registry.hpp"
#include "dtnn/rng.hpp"

namespace dtnn {

namespace {

// True when ls's layer plugin merely reshapes (traits.reshape: flatten).
bool merely_reshapes(const LayerSpec& ls, const Registry& registry) {
  const PluginRecord* r = registry.find("layer", ls.type);
  return r && r->status == PluginRecord::Status::ok && r->traits.reshape;
}

// The layer plugin of ls's type for ctx.device. A layer without a twin on the device is accepted
// only if it merely reshapes: it runs no code on any device.
std::shared_ptr<Layer> create_layer(const LayerSpec& ls, const LayerBuildContext& ctx) {
  const Registry& registry = *ctx.registry;
  if (ctx.device != Device::cpu && !registry.find("layer", ls.type, ctx.device) &&
      merely_reshapes(ls, registry))
    return registry.create_as<Layer>("layer", ls.type, ls.params);
  return registry.create_as<Layer>("layer", ls.type, ls.params, {}, ctx.device);
}

}  // namespace

std::shared_ptr<Layer> build_layer(const LayerSpec& ls, const LayerBuildContext& ctx) {
  auto layer = create_layer(ls, ctx);
  try {
    layer->build(ctx);
  } catch (const Error& e) {
    throw Error(ls.params.where() + " (" + ls.type + " on input " + ctx.input_shape.str() +
                "): " + e.what());
  }
  return layer;
}

void LayerChain::build(std::vector<LayerSpec> specs, const LayerBuildContext& ctx) {
  DTNN_CHECK(ctx.registry, "LayerChain::build needs the registry in its context");
  resolve_aliases(specs, *ctx.registry);
  fuse_layers(specs, ctx.fusions, *ctx.registry, ctx.device);
  buffers_ = ctx.gradient_buffers;
  if (!buffers_) {
    own_buffers_ = std::make_unique<GradientBuffers>();
    buffers_ = own_buffers_.get();
  }
  level_ = ctx.chain_level;
  Shape current = ctx.input_shape;
  std::int64_t largest = current.numel();
  bool trainable_before = ctx.needs_input_gradient;  // some layer before has parameters
  first_backward_ = specs.size();
  first_parameter_.assign(1, 0);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    LayerBuildContext c = ctx;
    c.input_shape = current;
    c.seed = Rng::derive(ctx.seed, i + 1);
    c.needs_input_gradient = trainable_before;
    c.gradient_buffers = buffers_;
    c.chain_level = level_ + 1;
    auto layer = build_layer(specs[i], c);
    current = layer->output_shape();
    largest = std::max(largest, current.numel());
    const std::size_t count = layer->parameters().size();
    first_parameter_.push_back(first_parameter_.back() + count);
    if (first_backward_ == specs.size() && (trainable_before || count > 0)) first_backward_ = i;
    trainable_before = trainable_before || count > 0;
    // In place over the layer before: its output is this chain's own buffer (not the chain's
    // input, not a reshape's view, not itself written over another's) and its backward does not
    // read it.
    const bool in_place = i > 0 && layer->runs_in_place() && outputs_[i - 1].defined() &&
                          !in_place_[i - 1] && !layers_[i - 1]->backward_reads_output() &&
                          layer->output_shape().numel() == layers_[i - 1]->output_shape().numel();
    in_place_.push_back(in_place);
    const Shape batch_shape = current.with_batch(ctx.max_batch);
    held_bytes_.push_back(0);
    reshapes_.push_back(merely_reshapes(specs[i], *ctx.registry));
    if (reshapes_[i]) {
      outputs_.emplace_back();
    } else if (in_place) {
      outputs_.push_back(outputs_[i - 1].view(batch_shape));
      std::swap(held_bytes_[i - 1], held_bytes_[i]);
    } else if (Tensor offered = layer->output_buffer();
               offered.defined() && offered.numel() == batch_shape.numel()) {
      outputs_.push_back(offered.reshape(batch_shape));  // the layer counts it
    } else {
      outputs_.push_back(Tensor::empty(batch_shape, ctx.dtype, ctx.layout, ctx.device));
      held_bytes_[i] = outputs_[i].bytes();
    }
    layers_.push_back(std::move(layer));
    types_.push_back(specs[i].type);
  }
  output_shape_ = current;
  views_.resize(layers_.size());
  if (layers_.size() > 1)
    for (auto slot : {GradientBuffers::Slot::ping, GradientBuffers::Slot::pong})
      buffers_->reserve(level_, slot, ctx.max_batch * largest, ctx.dtype, ctx.device);
}

const Tensor& LayerChain::forward(const Tensor& x, Mode mode) { return forward(x, mode, {}); }

const Tensor& LayerChain::forward(const Tensor& x, Mode mode,
                                  const std::function<void(std::size_t)>& after_layer) {
  input_ = x;
  const Tensor* in = &input_;
  const std::int64_t batch = x.dim(0);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    if (reshapes_[i]) {
      views_[i] = in->view(layers_[i]->output_shape().with_batch(batch));
    } else {
      views_[i] = outputs_[i].slice_batch(0, batch);
      layer_profile::timed(*layers_[i], in->shape(), true,
                           [&] { layers_[i]->forward(*in, views_[i], mode); });
    }
    in = &views_[i];
    if (after_layer) after_layer(i);
  }
  return *in;
}

void LayerChain::backward(const Tensor& dy, Tensor* dx, GradientListener* listener) {
  backward(dy, dx, listener, layers_.size());
}

void LayerChain::backward(const Tensor& dy_in, Tensor* dx, GradientListener* listener,
                          std::size_t end) {
  Tensor dy = dy_in;
  auto next_buffer = GradientBuffers::Slot::ping;
  // With dx, every layer runs backward; without, those before the first that needs it do not.
  const std::size_t stop = dx ? 0 : first_backward_;
  for (std::size_t i = end; i-- > stop;) {
    const Tensor& x = i ? views_[i - 1] : input_;
    const bool wants_dx = i > stop || dx;
    if (reshapes_[i]) {
      dy = dy.view(x.shape());
      if (i == 0 && dx) dx->copy_from(dy);
      continue;
    }
    Tensor out =
        i > 0 ? (wants_dx ? buffers_->view(level_, next_buffer, x.shape(), x.layout()) : Tensor())
              : (dx ? *dx : Tensor());
    layer_profile::timed(*layers_[i], x.shape(), false, [&] {
      layers_[i]->backward(x, views_[i], dy, wants_dx ? &out : nullptr);
    });
    const auto [first, last] = parameter_range(i);
    if (listener && last > first) listener->gradients_ready(first, last - first);
    dy = out;
    next_buffer = next_buffer == GradientBuffers::Slot::ping ? GradientBuffers::Slot::pong
                                                             : GradientBuffers::Slot::ping;
  }
}

std::vector<Parameter> LayerChain::parameters() {
  std::vector<Parameter> all;
  for (std::size_t i = 0; i < layers_.size(); ++i)
    for (auto& p : layers_[i]->parameters()) {
      p.name = std::to_string(i + 1) + "." + types_[i] + "." + p.name;
      all.push_back(std::move(p));
    }
  return all;
}

std::vector<Tensor> LayerChain::state() {
  std::vector<Tensor> all;
  for (auto& layer : layers_)
    for (auto& t : layer->state()) all.push_back(std::move(t));
  return all;
}

std::size_t LayerChain::workspace_bytes() const {
  std::size_t bytes = 0;
  for (const auto& layer : layers_) bytes = std::max(bytes, layer->workspace_bytes());
  return bytes;
}

std::size_t LayerChain::activation_bytes() const {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < layers_.size(); ++i)
    bytes += held_bytes_[i] + layers_[i]->inner_activation_bytes();
  return bytes;
}

Tensor LayerChain::reusable_output() const {
  if (layers_.empty() || !outputs_.back().defined() || in_place_.back() ||
      layers_.back()->backward_reads_output())
    return {};
  return outputs_.back();
}

std::string LayerChain::report() const {
  std::string all;
  for (const auto& layer : layers_) {
    const std::string r = layer->report();
    if (!r.empty()) all += (all.empty() ? "" : "\n") + r;
  }
  return all;
}

}  // namespace dtnn
