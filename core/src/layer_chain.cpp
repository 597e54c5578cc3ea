#include "dtnn/layer_chain.hpp"

#include <algorithm>

#include "dtnn/device.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer_profile.hpp"
#include "dtnn/model_spec.hpp"
#include "dtnn/precision.hpp"
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
  build(std::move(specs), ctx, BuildOptions{});
}

void LayerChain::build(std::vector<LayerSpec> specs, const LayerBuildContext& ctx,
                       BuildOptions options) {
  DTNN_CHECK(ctx.registry, "LayerChain::build needs the registry in its context");
  resolve_aliases(specs, *ctx.registry);
  fuse_layers(specs, ctx.fusions, *ctx.registry, ctx.device);
  buffers_ = ctx.gradient_buffers;
  if (!buffers_) {
    own_buffers_ = std::make_unique<GradientBuffers>();
    buffers_ = own_buffers_.get();
  }
  level_ = ctx.chain_level;
  layout_ = ctx.layout;
  packed_ = ctx.saved_activations == Precision::bf16;
  DTNN_CHECK(!packed_ || (ctx.dtype == DType::float32 && ctx.device == Device::cpu),
             "activations saved in bf16 need float32 tensors on the cpu");
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
    reshapes_.push_back(merely_reshapes(specs[i], *ctx.registry));
    // In place over the layer before: its output is this chain's own memory (not the chain's
    // input, not a reshape's view, not itself written over another's) and its backward does not
    // read it.
    in_place_.push_back(i > 0 && layer->runs_in_place() && !reshapes_[i - 1] && !in_place_[i - 1] &&
                        !layers_[i - 1]->backward_reads_output() &&
                        current.numel() == layers_[i - 1]->output_shape().numel());
    layers_.push_back(std::move(layer));
    types_.push_back(specs[i].type);
  }
  output_shape_ = current;
  allocate_outputs(ctx, options);
  views_.resize(layers_.size());
  if (layers_.size() > 1)
    for (auto slot : {GradientBuffers::Slot::ping, GradientBuffers::Slot::pong})
      buffers_->reserve(level_, slot, ctx.max_batch * largest, ctx.dtype, ctx.device);
}

// Where each layer's output lives: a reshape's is its input's view, one in place is the output
// before's, one the layer offers is the layer's; with packed activations, the level's forward
// buffers in turn (but for the chain's output, unless allowed, or the caller's memory where the
// caller gives it); otherwise a buffer of its own.
void LayerChain::allocate_outputs(const LayerBuildContext& ctx, BuildOptions options) {
  const auto n = static_cast<int>(layers_.size());
  int root = n - 1;  // the layer whose memory holds the chain's output (-1: the input's)
  while (root >= 0 && (reshapes_[root] || in_place_[root])) --root;
  std::int64_t largest_in_level = 0;
  for (int i = 0; i < n; ++i) {
    const Shape batch_shape = layers_[i]->output_shape().with_batch(ctx.max_batch);
    held_bytes_.push_back(0);
    storage_.push_back(i);
    slot_.push_back(-1);
    if (reshapes_[i] || in_place_[i]) {
      storage_[i] = i ? storage_[i - 1] : -1;
      slot_[i] = i ? slot_[i - 1] : -1;
      if (reshapes_[i] || !outputs_[i - 1].defined()) {
        outputs_.emplace_back();
      } else {
        outputs_.push_back(outputs_[i - 1].view(batch_shape));
        std::swap(held_bytes_[i - 1], held_bytes_[i]);
      }
    } else if (Tensor offered = layers_[i]->output_buffer();
               offered.defined() && offered.numel() == batch_shape.numel()) {
      outputs_.push_back(offered.reshape(batch_shape));  // the layer counts it
    } else if (packed_ && i == root && options.output_in_callers_memory) {
      slot_[i] = kCallersSlot;  // forward_into's memory
      outputs_.emplace_back();
      callers_storage_ = i;
    } else if (packed_ && (i != root || options.output_in_level_buffers)) {
      slot_[i] = i > 0 && slot_[i - 1] == 0 ? 1 : 0;  // not the one its input is in
      outputs_.emplace_back();
      largest_in_level = std::max(largest_in_level, batch_shape.numel());
    } else {
      outputs_.push_back(Tensor::empty(batch_shape, ctx.dtype, ctx.layout, ctx.device));
      held_bytes_[i] = outputs_[i].bytes();
    }
  }
  if (!packed_) return;
  // What backward reads: a layer's input (an activation in place reads its output instead) and,
  // where it says so, its output.
  std::vector<bool> read(n, false);
  for (int j = 0; j < n; ++j) {
    if (reshapes_[j]) continue;
    if (!in_place_[j] && j > 0 && storage_[j - 1] >= 0) read[storage_[j - 1]] = true;
    if (in_place_[j] || layers_[j]->backward_reads_output()) read[storage_[j]] = true;
  }
  copies_.resize(n);
  pack_after_.assign(n, false);
  for (int i = n - 1; i >= 0; --i) {
    const int s = storage_[i];
    if (reshapes_[i] || slot_[i] < 0 || !read[s] || copies_[s]) continue;
    // i is the last layer to write storage s: pack after it.
    const auto count =
        static_cast<std::size_t>(layers_[s]->output_shape().with_batch(ctx.max_batch).numel());
    copies_[s] = std::make_unique_for_overwrite<std::uint16_t[]>(count);
    pack_after_[i] = true;
    held_bytes_[i] = count * sizeof(std::uint16_t);
  }
  if (largest_in_level > 0)
    for (auto slot : {GradientBuffers::Slot::forward_a, GradientBuffers::Slot::forward_b})
      buffers_->reserve(level_, slot, largest_in_level, ctx.dtype, ctx.device);
}

Tensor LayerChain::level_buffer(int slot, const Shape& shape) const {
  return buffers_->view(
      level_, slot == 0 ? GradientBuffers::Slot::forward_a : GradientBuffers::Slot::forward_b,
      shape, layout_);
}

// The forward buffer holding storage s's copy unpacked: one that already does (the layer after
// it unpacked the same activation), else the one that is not `keep` after unpacking it there.
int LayerChain::unpack(int s, int keep) {
  for (const int slot : {0, 1})
    if (slot != keep && unpacked_[slot] == s) return slot;
  const int slot = keep == 0 ? 1 : 0;
  Tensor t = level_buffer(slot, views_[s].shape());
  unpack_bf16(copies_[s].get(), t.data<float>(), t.numel());
  unpacked_[slot] = s;
  return slot;
}

const Tensor& LayerChain::forward(const Tensor& x, Mode mode) { return forward(x, mode, {}); }

const Tensor& LayerChain::forward_into(const Tensor& x, const Tensor& into, Mode mode) {
  callers_ = into;
  const Tensor& y = forward(x, mode, {});
  callers_ = Tensor();
  return y;
}

const Tensor& LayerChain::forward(const Tensor& x, Mode mode,
                                  const std::function<void(std::size_t)>& after_layer) {
  input_ = x;
  const Tensor* in = &input_;
  const std::int64_t batch = x.dim(0);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const Shape shape = layers_[i]->output_shape().with_batch(batch);
    if (reshapes_[i]) {
      views_[i] = in->view(shape);
    } else {
      if (slot_[i] < 0) {
        views_[i] = outputs_[i].slice_batch(0, batch);
      } else if (in_place_[i]) {
        views_[i] = views_[i - 1].view(shape);
      } else if (slot_[i] == kCallersSlot) {
        DTNN_CHECK(callers_.defined() && callers_.numel() >= shape.numel(),
                   "LayerChain: a chain that writes its output into its caller's memory runs "
                   "through forward_into");
        views_[i] = callers_.view(shape).with_layout(layout_);
      } else {
        views_[i] = level_buffer(slot_[i], shape);
      }
      layer_profile::timed(*layers_[i], in->shape(), true,
                           [&] { layers_[i]->forward(*in, views_[i], mode); });
      if (packed_ && mode == Mode::train && pack_after_[i])
        pack_bf16(views_[i].data<float>(), copies_[storage_[i]].get(), views_[i].numel());
    }
    in = &views_[i];
    if (after_layer) after_layer(i);
  }
  return *in;
}

void LayerChain::backward(const Tensor& dy, Tensor* dx, GradientListener* listener) {
  backward(dy, dx, listener, layers_.size());
}

void LayerChain::backward(const Tensor& dy, Tensor* dx, GradientListener* listener,
                          std::size_t end) {
  backward_through(input_, dy, dx, listener, end);
}

void LayerChain::backward_from(const Tensor& x, const Tensor& dy, Tensor* dx,
                               GradientListener* listener) {
  backward_through(x, dy, dx, listener, layers_.size());
}

// Layer i's input and output as its backward reads them: the forward's views, or, with packed
// activations, the copies unpacked into the level's forward buffers.
std::pair<Tensor, Tensor> LayerChain::saved(std::size_t i, const Tensor& input) {
  Tensor y = views_[i];
  int y_slot = -1;
  if (packed_ && slot_[i] >= 0 && (in_place_[i] || layers_[i]->backward_reads_output())) {
    y_slot = unpack(storage_[i], -1);
    y = level_buffer(y_slot, y.shape());
  }
  if (packed_ && in_place_[i] && slot_[i] >= 0) return {y, y};  // x held y's values
  if (i == 0) return {input, y};
  if (storage_[i - 1] < 0) return {input.view(views_[i - 1].shape()), y};  // the input reshaped
  if (packed_ && slot_[i - 1] >= 0)
    return {level_buffer(unpack(storage_[i - 1], y_slot), views_[i - 1].shape()), y};
  return {views_[i - 1], y};
}

void LayerChain::backward_through(const Tensor& input, const Tensor& dy_in, Tensor* dx,
                                  GradientListener* listener, std::size_t end) {
  Tensor dy = dy_in;
  unpacked_ = {-1, -1};  // another chain of the level may have used the buffers since
  auto next_buffer = GradientBuffers::Slot::ping;
  // With dx, every layer runs backward; without, those before the first that needs it do not.
  const std::size_t stop = dx ? 0 : first_backward_;
  for (std::size_t i = end; i-- > stop;) {
    const bool wants_dx = i > stop || dx;
    if (reshapes_[i]) {
      dy = dy.view(i ? views_[i - 1].shape() : input.shape());
      if (i == 0 && dx) dx->copy_from(dy);
      continue;
    }
    const std::pair<Tensor, Tensor> xy = saved(i, input);
    const Tensor &x = xy.first, &y = xy.second;  // (clang captures no structured bindings)
    Tensor out =
        i > 0 ? (wants_dx ? buffers_->view(level_, next_buffer, x.shape(), x.layout()) : Tensor())
              : (dx ? *dx : Tensor());
    layer_profile::timed(*layers_[i], x.shape(), false,
                         [&] { layers_[i]->backward(x, y, dy, wants_dx ? &out : nullptr); });
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
