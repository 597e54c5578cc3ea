// LayerChain: layers applied one after another, every activation and gradient buffer allocated
// once for the largest batch: a model's layers (Model adds the loss), a path of an add or concat
// block. Parameter gradients accumulate; dx, when asked for, is overwritten (the Layer contract).
// The gradient buffers are the model's, shared with every chain at the same nesting level
// (gradient_buffers.hpp). A layer that runs in place (relu after a conv or batchnorm; see
// Layer::runs_in_place) writes its output over the layer before's, which then has none of its own.
// A layer needs dx only when some layer before it (or before the chain) has parameters: the layers
// before the chain's first trainable one run no backward when the chain's input needs no gradient.
//
// With training.saved_activations "bf16" (ctx.saved_activations), what backward reads of the
// chain's outputs is kept as packed bfloat16 copies, taken as forward goes, and the float32 outputs
// themselves live in two buffers that every chain of the level shares, one layer's output after
// the other's ((level, forward_a) and (level, forward_b) of gradient_buffers.hpp); backward
// unpacks the copies into the same two buffers for each layer. The chain's last output keeps
// memory of its own (its caller reads it after forward), unless the chain was told that its
// output is read before any other chain of its level runs (the path of a block that runs last,
// BuildOptions::output_in_level_buffers), or that its caller hands it the memory to write it into
// (BuildOptions::output_in_callers_memory: an add block's own output, which the other paths are
// then added to). Such a chain's output(i) is valid only until the next layer has run.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/gradient_buffers.hpp"
#include "dtnn/layer.hpp"

namespace dtnn {

struct LayerSpec;

// Told by LayerChain::backward when gradients become final: parameters [first, first + count) of
// the chain's parameters() belong to the layer whose backward has just run (the gradient exchange
// starts that bucket's allreduce; one process updates those parameters at once).
class GradientListener {
 public:
  virtual void gradients_ready(std::size_t first, std::size_t count) = 0;

 protected:
  ~GradientListener() = default;
};

// The layer spec describes, created from ctx.registry and built on ctx (errors name the spec's
// place in its file and the input shape).
DTNN_CORE_EXPORT std::shared_ptr<Layer> build_layer(const LayerSpec& spec,
                                                    const LayerBuildContext& ctx);

class DTNN_CORE_EXPORT LayerChain {
 public:
  // Builds specs one after another on ctx.input_shape, after resolving aliases and fusing them as
  // ctx.fusions says. Each layer gets ctx with its own seed (derived from ctx.seed and its
  // position), and is told whether it needs dx (see above; ctx.needs_input_gradient is the
  // chain's input's). The chain's gradient buffers are level ctx.chain_level of
  // ctx.gradient_buffers (its own when null); its layers build their chains one level deeper.
  void build(std::vector<LayerSpec> specs, const LayerBuildContext& ctx);
  struct BuildOptions {
    // With bf16 saved activations: the chain's last output may live in the level's forward
    // buffers (its reader is done with it before another chain of the level runs).
    bool output_in_level_buffers = false;
    // With bf16 saved activations: the chain's last output is written into the memory its
    // caller passes to forward_into (which the caller may overwrite once the chain has run;
    // backward reads the copy). Ignored where that output is the chain's input.
    bool output_in_callers_memory = false;
  };
  void build(std::vector<LayerSpec> specs, const LayerBuildContext& ctx, BuildOptions options);

  bool empty() const { return layers_.empty(); }
  std::size_t size() const { return layers_.size(); }
  Layer& layer(std::size_t i) { return *layers_[i]; }
  // Layer i merely reshapes (its plugin's traits.reshape): its output is its input's memory and
  // it runs nothing.
  bool reshapes(std::size_t i) const { return reshapes_[i]; }
  const Layer& layer(std::size_t i) const { return *layers_[i]; }
  Shape output_shape() const { return output_shape_; }

  // The chain applied to x: a view valid until the next forward (x itself when the chain is
  // empty). after_layer(i), when given, runs as soon as layer i's output is there (before a layer
  // that runs in place overwrites it).
  const Tensor& forward(const Tensor& x, Mode mode);
  const Tensor& forward(const Tensor& x, Mode mode,
                        const std::function<void(std::size_t)>& after_layer);
  // forward(x, mode), the last output written into `into` (its first batch outputs) where the
  // chain was built with output_in_callers_memory; the result is then a view of `into`.
  const Tensor& forward_into(const Tensor& x, const Tensor& into, Mode mode);
  // Whether forward_into writes the output into the caller's memory.
  bool writes_into_callers_memory() const { return callers_storage_ >= 0; }
  // Layer i's output of the last forward ([n, output...]; a reshape layer's is its input's view;
  // a layer followed by one that runs in place holds that layer's output).
  const Tensor& output(std::size_t i) const { return views_[i]; }
  // Bytes of output buffer this chain allocated that end holding layer i's output (0 for a
  // reshape, for a layer the next writes over, for one whose output lives in its own memory).
  std::size_t held_bytes(std::size_t i) const { return held_bytes_[i]; }
  // The last layer's output buffer (max_batch outputs) when nothing reads it again in backward
  // (the layer's backward does not, and it is the chain's own): where an add block may write
  // its sum. Undefined otherwise.
  Tensor reusable_output() const;
  // After forward(x): accumulates the parameter gradients of layers [.., end) for dy = dLoss/d(the
  // output of layer end - 1), telling listener (when given) of each layer's parameters as soon as
  // their gradients are final, and, when dx is given, writes dLoss/dx into it.
  void backward(const Tensor& dy, Tensor* dx, GradientListener* listener = nullptr);
  void backward(const Tensor& dy, Tensor* dx, GradientListener* listener, std::size_t end);
  // The same, with the chain's input of the last forward as its caller keeps it (x's memory may
  // have been reused since forward: a block hands on the x its own backward was given).
  void backward_from(const Tensor& x, const Tensor& dy, Tensor* dx,
                     GradientListener* listener = nullptr);
  // Whether outputs live in the level's shared buffers (bf16 saved activations).
  bool packs_activations() const { return packed_; }

  // Every layer's parameters, named "<position from 1>.<type>.<name>", in layer order.
  std::vector<Parameter> parameters();
  // Layer i's parameters are parameters()[first, second).
  std::pair<std::size_t, std::size_t> parameter_range(std::size_t i) const {
    return {first_parameter_[i], first_parameter_[i + 1]};
  }
  std::vector<Tensor> state();
  std::size_t workspace_bytes() const;
  // Bytes of the layers' outputs kept for backward (nested chains included; bf16 copies where
  // saved so), and of the gradient and forward buffers this chain owns (none when they are the
  // model's).
  std::size_t activation_bytes() const;
  std::size_t own_gradient_bytes() const {
    return own_buffers_ ? own_buffers_->bytes() + own_buffers_->forward_bytes() : 0;
  }
  std::string report() const;  // the layers' reports, one per line

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
  std::vector<std::string> types_;
  void allocate_outputs(const LayerBuildContext& ctx, BuildOptions options);
  Tensor level_buffer(int slot, const Shape& shape) const;
  int unpack(int storage, int keep);
  std::pair<Tensor, Tensor> saved(std::size_t i, const Tensor& input);
  void backward_through(const Tensor& input, const Tensor& dy, Tensor* dx,
                        GradientListener* listener, std::size_t end);

  std::vector<Tensor> outputs_;  // [max_batch, output of layer i]; empty for reshapes
  std::vector<Tensor> views_;    // the current batch's outputs
  std::vector<bool> reshapes_;   // layer i merely reshapes (traits.reshape): runs nothing
  std::vector<bool> in_place_;   // layer i's output is layer i - 1's buffer
  std::vector<std::size_t> held_bytes_;
  // bf16 saved activations (packed_): the layer whose write made the memory of layer i's output
  // (i itself; the one before for a reshape or a layer in place; -1: the chain's input), the
  // level's forward buffer holding it (0: forward_a, 1: forward_b; -1: memory of its own), the
  // packed copy of storage s (none when backward does not read it), and whether to pack layer
  // i's storage after its forward (its last writer).
  bool packed_ = false;
  Layout layout_ = Layout::nhwc;
  std::vector<int> storage_;
  std::vector<int> slot_;  // also kCallersSlot: the memory forward_into was given
  static constexpr int kCallersSlot = 2;
  int callers_storage_ = -1;  // the storage in the caller's memory (-1: none)
  Tensor callers_;            // that memory, for the forward under way
  std::vector<std::unique_ptr<std::uint16_t[]>> copies_;
  std::vector<bool> pack_after_;
  std::array<int, 2> unpacked_ = {-1, -1};        // the storage unpacked in each forward buffer
  std::unique_ptr<GradientBuffers> own_buffers_;  // when the context brought none
  GradientBuffers* buffers_ = nullptr;
  int level_ = 0;
  Tensor input_;  // the x of the last forward
  Shape output_shape_;
  std::vector<std::size_t> first_parameter_;  // layer i owns [first_parameter_[i], [i + 1])
  std::size_t first_backward_ = 0;            // backward stops here (the first layer that needs it)
};

}  // namespace dtnn
