// Layer: shape inference, forward, backward and parameters of one operation of a model.
//
// Shapes exclude the batch: a layer sees per-sample shapes at build time and batches of at most
// max_batch samples at run time (the model hands it views of buffers it allocated once).
// Contract of backward: parameter gradients ACCUMULATE (+=); dx, when requested, is OVERWRITTEN.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/layer_extensions.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/precision.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class Registry;
class Communicator;
class Workspace;
class GradientBuffers;
class PydtnnArrays;
class Int8Product;

enum class Mode : std::uint8_t { train = 0, eval = 1 };

// The fusion options a run enabled (PyDTNN's: "conv_relu", "conv_batchnorm",
// "conv_batchnorm_relu", "batchnorm_relu"): the runs of layers a model merges into one, as the
// layer plugins' traits declare them. See fuse_layers in model.hpp.
using Fusions = std::set<std::string>;

struct LayerBuildContext {
  Shape input_shape;  // per sample, memory order of layout
  DType dtype = DType::float32;
  Layout layout = Layout::nhwc;
  // training.precision: the precision of the layer's products (convolutions, fc, attention's
  // matrix products; precision.hpp). Parameters, gradients and reductions stay in dtype.
  Precision precision = Precision::fp32;
  // training.saved_activations: the format of the activations chains keep for backward (bf16:
  // packed copies, and the float32 outputs in buffers the chains of a level share;
  // layer_chain.hpp).
  Precision saved_activations = Precision::fp32;
  Device device = Device::cpu;  // where the layer's tensors live (the type's twin there)
  Params device_params;         // the experiment's "gpu" object (tf32, cudnn_auto_conv_alg, ...)
  std::int64_t max_batch = 1;
  std::uint64_t seed = 0;                // this layer's own seed (initialisers, dropout)
  const Registry* registry = nullptr;    // conv2d asks it for its ConvAlgorithm
  Communicator* communicator = nullptr;  // the run's, when it has more than one process
  Workspace* workspace = nullptr;  // scratch memory the model's layers share (null: each its own)
  // The dLoss/d(activation) buffers the model's chains share, and the level of the chains this
  // layer builds, if any (gradient_buffers.hpp; null: a chain or block makes its own).
  GradientBuffers* gradient_buffers = nullptr;
  int chain_level = 0;
  bool needs_input_gradient = true;  // false when no layer before has parameters: dx == nullptr
  Fusions fusions;                   // what blocks apply to the layers of their paths
  // What families of layers share among themselves by name: the experiment's conv object
  // (conv_options.hpp), the sequence layers' padding lengths and decoder memory
  // (sequence_context.hpp); see layer_extensions.hpp.
  LayerExtensions extensions;
};

// A trainable tensor and its gradient (same shape and dtype).
struct Parameter {
  std::string name;  // "weights", "biases"
  Tensor value;
  Tensor grad;
};

class DTNN_CORE_EXPORT Layer : public Plugin {
 public:
  ~Layer() override;
  virtual std::string type() const = 0;
  virtual void build(const LayerBuildContext& ctx) = 0;  // allocates parameters and workspaces
  virtual Shape output_shape() const = 0;                // per sample

  virtual void forward(const Tensor& x, Tensor& y, Mode mode) = 0;
  // x and y are what forward saw and produced; dy = dLoss/dy.
  virtual void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) = 0;

  // A layer whose output is its input's memory under another per-sample shape (flatten) says so
  // in its traits, {"reshape": true}: the chain then aliases y to x and dx to dy and calls neither
  // forward nor backward, so such a layer costs nothing. A softmax over each sample says
  // {"softmax": true}: a model ending in one lets a loss that offers it give dLoss/d(softmax
  // input) directly (Loss::backward_through_softmax). See plugin_traits.hpp.
  // Memory reuse (LayerChain). backward_reads_output: false when backward never reads y, so that
  // the layer after may write its output over y. runs_in_place: true when forward may write y
  // over x (the same memory) and backward is right when x holds y (an activation whose derivative
  // follows from its output: relu, sigmoid, tanh). A chain runs a layer in place only where both
  // hold (the layer before does not read its output, and is the chain's own).
  virtual bool backward_reads_output() const { return true; }
  virtual bool runs_in_place() const { return false; }
  // Memory of max_batch outputs that the layer offers to hold its own output, asked once after
  // build (an add block offers its first path's last output, which nothing reads after the sum);
  // an undefined tensor: the chain allocates the output.
  virtual Tensor output_buffer() { return {}; }

  virtual std::vector<Parameter> parameters() { return {}; }
  // State that is not a parameter but that checkpoints must carry (running statistics, dropout's
  // step), as tensors sharing the layer's storage; loading copies into them.
  virtual std::vector<Tensor> state() { return {}; }
  // For the summary table: "(3, 3, 1, 4)" and "padding=(0,0) stride=(1,1)"; "" when none.
  virtual std::string weights_shape() const { return ""; }
  virtual std::string attributes() const { return ""; }
  virtual std::size_t workspace_bytes() const { return 0; }
  // Bytes of the activations the layer keeps inside for backward besides its output (the outputs
  // of a block's paths), for the summary's memory table.
  virtual std::size_t inner_activation_bytes() const { return 0; }
  // Floating-point operations of forward on `batch` samples (a multiply-add is 2), for the
  // GFLOP/s of profiles and traces; 0 when the layer does not count them. Backward counts twice
  // this for a layer with weights (the input's gradient and the weights').
  virtual double forward_flops(std::int64_t /*batch*/) const { return 0; }
  // What the layer has to say at the end of the run (e.g. its conv algorithm's tuning); "" if
  // nothing.
  virtual std::string report() const { return ""; }
  // Its part of a PyDTNN weights file (dtnn/pydtnn_arrays.hpp), on this per-sample input: by
  // default one PyDTNN layer of class type() holding each parameter under its own name.
  virtual void pydtnn_arrays(PydtnnArrays& out, const Shape& input);
  // Int8 inference (int8_product.hpp): the layer's int8 product when its product can run in int8
  // (conv2d and fc on float32 host tensors), else null. Once the product is ready(), forward in
  // evaluation runs it; training refuses a model with a ready product.
  virtual Int8Product* int8_product() { return nullptr; }
  // The layers this one holds (a block's paths: "path<p>.<i>"), for walks over every layer of a
  // model (int8_model.hpp); none by default.
  virtual std::vector<std::pair<std::string, Layer*>> inner_layers() { return {}; }
};

}  // namespace dtnn
