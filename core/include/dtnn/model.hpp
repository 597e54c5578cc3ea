// Model: the layers of a model JSON as one LayerChain (every activation and gradient buffer
// allocated once for the largest batch), and the loss's gradient to start backward with.
// forward/backward on a batch allocate nothing.
//
// Model file:  {"name": "simplecnn", "input_shape": [28, 28, 1],            (optional, HWC)
//               "classes": 10,                    (optional: what "$classes" in the layers is)
//               "layers": [{"type": "conv2d", "filters": 4, "kernel": 3}, {"type": "relu"}, ...]}
// Without input_shape the model takes the dataset's samples; without classes, its classes.
// A pinned variant names another model as its base instead of listing layers, and pins its shape
// and classes: {"name": "resnet20_cifar10", "base": "resnet20", "input_shape": [32, 32, 3],
// "classes": 10} (PyDTNN 1.x's sized names over 3.x's dataset-generic models).
// A layer entry may be {"repeat": N, "layers": [...]}, expanded in place N times.
// A layer plugin may be an alias of another with some parameters fixed (pointwise_conv2d: a conv2d
// with kernel 1, ...): resolve_aliases rewrites such entries before the model builds them.
#pragma once
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/layer_chain.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_traits.hpp"
#include "dtnn/tensor.hpp"
#include "dtnn/workspace.hpp"

namespace dtnn {

class Registry;
class Loss;

struct LayerSpec {
  std::string type;
  Params params;  // the entry without "type"
};

struct ModelSpec {
  std::string name;
  std::filesystem::path file;           // empty when given inline
  std::optional<Shape> input_shape;     // HWC as written in the file
  std::optional<std::int64_t> classes;  // "$classes" when the file pins it
  std::vector<LayerSpec> layers;
};

// A list of layer entries (repeat blocks expanded); where names it in errors.
DTNN_CORE_EXPORT std::vector<LayerSpec> parse_layer_list(const nlohmann::json& layers,
                                                         const std::string& where);
// The fusion rules (plugin_traits.hpp) of the layer plugin `type` on device (none for a type
// without a plugin there). An absorbed layer becomes the fusing one's parameter: its type name
// where the plugin's default for that parameter is a string ("activation": "relu"), else its
// parameters ("batchnorm": {...}).
DTNN_CORE_EXPORT std::vector<FusionRule> fusion_rules(const Registry& registry,
                                                      const std::string& type, Device device);
// Rewrites the entries whose layer plugin is an alias (traits {"alias": {"type": "conv2d",
// "fixed": {"kernel": 1, ...}}}) into the aliased type with the fixed parameters; an entry that
// sets a fixed parameter is an Error naming it.
DTNN_CORE_EXPORT void resolve_aliases(std::vector<LayerSpec>& specs, const Registry& registry);
// Every fusion option the layer plugins on device declare.
DTNN_CORE_EXPORT std::set<std::string> fusion_options(const Registry& registry, Device device);
// Rewrites runs of layers into fused ones, left to right, the rules of each layer in the order its
// plugin lists them (the longest run first), as far as `fusions` enables them. A layer that already
// sets a parameter its rules write is neither fused nor absorbed.
DTNN_CORE_EXPORT void fuse_layers(std::vector<LayerSpec>& specs, const Fusions& fusions,
                                  const Registry& registry, Device device);
// Replaces, in every layer entry (blocks' paths included), a parameter value that is one of the
// names in `sizes` ("$classes", "$vocab", "$source_length") by its number, so that a model file
// takes its classifier's width, its embedding's vocabulary or its encoder's length from the
// dataset. A name the run does not know
// (a dataset without a vocabulary) is an Error naming the entry.
DTNN_CORE_EXPORT void substitute_sizes(std::vector<LayerSpec>& specs,
                                       const std::map<std::string, std::int64_t>& sizes);
// The most layers a model may expand to, repeat blocks and blocks' paths included.
inline constexpr std::int64_t kMaxModelLayers = 100000;
// A model object; a "base" in it is looked for as a model name is, beside `relative_to` (the
// experiment file holding the object) first.
DTNN_CORE_EXPORT ModelSpec parse_model_spec(const nlohmann::json& j, const std::string& where,
                                            const std::filesystem::path& relative_to = {});
DTNN_CORE_EXPORT ModelSpec load_model_spec(const std::filesystem::path& file);

struct ModelOptions {
  DType dtype = DType::float32;
  Precision precision = Precision::fp32;  // of the layers' products (training.precision)
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
