// Model: the layers of a model JSON as one LayerChain (every activation and gradient buffer
// allocated once for the largest batch), and the loss's gradient to start backward with.
// forward/backward on a batch allocate nothing. The model file and its rewrites (repeats,
// aliases, fusions, sizes from the dataset) are model_spec.hpp's.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/layer_chain.hpp"
#include "dtnn/model_spec.hpp"
#include "dtnn/params.hpp"
#include "dtnn/tensor.hpp"
#include "dtnn/workspace.hpp"

namespace dtnn {

class Registry;
class Loss;

struct ModelOptions {
  DType dtype = DType::float32;
  Precision precision = Precision::fp32;  // of the layers' products (training.precision)
  // Of the activations kept for backward (training.saved_activations: fp32 or bf16; the cpu and
  // float32 only).
  Precision saved_activations = Precision::fp32;
  Layout layout = Layout::nhwc;
  Device device = Device::cpu;  // every tensor of the model lives there (device.hpp)
  Params device_params;         // the experiment's "gpu" object, for the device's layers
  std::int64_t max_batch = 64;
  std::uint64_t seed = 1;
  std::string conv_algorithm = "i2c";
  Params conv_params;
  Communicator* communicator = nullptr;  // the run's, when it has more than one process
  // One workspace shared by all layers (its size the largest layer's need), or one per layer
  // (the sum; i2c's backward-filter then always finds forward's columns).
  bool shared_workspace = true;
  Fusions fusions;  // layer runs to fuse (none by default)
};

class DTNN_CORE_EXPORT Model {
 public:
  // input_shape: per sample, memory order of options.layout.
  Model(const ModelSpec& spec, const ModelOptions& options, const Shape& input_shape,
        const Registry& registry);

  // x: [n, input...] with n <= max_batch. Returns a view [n, output...] valid until the next call.
  const Tensor& forward(const Tensor& x, Mode mode);
  // The same, calling after_layer(i) as soon as layer i's output is there (layer_output(i) is
  // then the layer's own, before a layer that runs in place writes over it).
  const Tensor& forward(const Tensor& x, Mode mode,
                        const std::function<void(std::size_t)>& after_layer);
  // After forward(x, train): zeroes nothing, accumulates parameter gradients for the loss, and
  // tells `listener` (when given) of each layer's parameters as soon as their gradients are final.
  // gradient_scale multiplies the loss's gradient before it goes back through the layers (loss
  // scaling, dtnn/loss_scale.hpp; host memory).
  void backward(Loss& loss, const Tensor& y_true, GradientListener* listener = nullptr,
                double gradient_scale = 1.0);
  void zero_grad();

  std::span<const Parameter> parameters() const { return parameters_; }
  std::int64_t parameter_count() const;
  std::size_t num_layers() const { return chain_.size(); }
  // Layer i's parameters are parameters()[begin, end).
  std::pair<std::size_t, std::size_t> parameter_range(std::size_t layer) const {
    return chain_.parameter_range(layer);
  }
  Layer& layer(std::size_t i) { return chain_.layer(i); }
  const Layer& layer(std::size_t i) const { return const_cast<LayerChain&>(chain_).layer(i); }
  bool reshapes(std::size_t i) const { return chain_.reshapes(i); }  // see LayerChain
  // The last layer is a softmax over each sample (its plugin's traits.softmax).
  bool ends_in_softmax() const { return ends_in_softmax_; }
  // Layer i's output of the last forward ([n, output...]; a reshape layer's is its input's view;
  // a layer followed by one that runs in place holds that one's output).
  const Tensor& layer_output(std::size_t i) const { return chain_.output(i); }
  const Shape& input_shape() const { return input_shape_; }
  Shape output_shape() const;
  const ModelOptions& options() const { return options_; }
  const std::string& name() const { return name_; }
  // PyDTNN's model table: index, type, #params, output shape, weights shape, attributes, totals.
  std::string summary() const;
  // What training holds in memory, per layer and in total, as PyDTNN 3.x prints it: the layer's
  // activations for a batch of max_batch (kept for backward: its output unless the next layer
  // writes over it, and a block's paths' outputs), its parameters, their gradients and the
  // optimizer's state (optimizer_state_bytes over the model, shared out by parameter size); the
  // total adds the shared workspace and gradient buffers.
  std::string memory_table(std::size_t optimizer_state_bytes) const;
  // Bytes of the dLoss/d(activation) buffers the model's chains share (gradient_buffers.hpp).
  std::size_t gradient_buffer_bytes() const { return gradient_buffers_.bytes(); }
  // Bytes of the workspace the layers share (0 when each layer has its own).
  std::size_t shared_workspace_bytes() const { return workspace_ ? workspace_->bytes() : 0; }

  // Per-layer time accounting (dtnn/layer_profile.hpp; off by default).
  void set_profiling(bool on);
  // Milliseconds per call and share of the total of each layer (a block is one row), then by kind
  // of layer, blocks' layers included.
  std::string profile_table() const;

 private:
  std::string name_;
  ModelOptions options_;
  Shape input_shape_;
  std::unique_ptr<Workspace> workspace_;  // declared before chain_: outlives its layers
  GradientBuffers gradient_buffers_;      // the same
  LayerChain chain_;
  std::vector<Parameter> parameters_;  // chain_.parameters(), taken once
  Tensor dy_;                          // [max_batch, output]: dLoss/d(output) from the loss
  bool ends_in_softmax_ = false;
};

}  // namespace dtnn
