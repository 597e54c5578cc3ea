// LayerChain: layers applied one after another, every activation and gradient buffer allocated
// once for the largest batch (a path of an add or concat block). Parameter gradients accumulate;
// dx, when asked for, is overwritten (the Layer contract).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/layer.hpp"

namespace dtnn {

struct LayerSpec;

// The layer spec describes, created from ctx.registry and built on ctx (errors name the spec's
// place in its file and the input shape).
DTNN_CORE_EXPORT std::shared_ptr<Layer> build_layer(const LayerSpec& spec,
                                                    const LayerBuildContext& ctx);

class DTNN_CORE_EXPORT LayerChain {
 public:
  // Builds specs one after another on ctx.input_shape, after fusing them as ctx.fusions says.
  // Each layer gets ctx with its own seed (derived from ctx.seed and its position); only the
  // first may be told it needs no dx.
  void build(std::vector<LayerSpec> specs, const LayerBuildContext& ctx);

  bool empty() const { return layers_.empty(); }
  std::size_t size() const { return layers_.size(); }
  Layer& layer(std::size_t i) { return *layers_[i]; }
  Shape output_shape() const { return output_shape_; }

  // The chain applied to x: a view valid until the next forward (x itself when the chain is
  // empty).
  const Tensor& forward(const Tensor& x, Mode mode);
  // After forward(x): accumulates parameter gradients for dy = dLoss/dy and, when dx is given,
  // writes dLoss/dx into it.
  void backward(const Tensor& dy, Tensor* dx);

  // Every layer's parameters, named "<position from 1>.<type>.<name>".
  std::vector<Parameter> parameters();
  std::vector<Tensor> state();
  std::size_t workspace_bytes() const;
  std::string report() const;  // the layers' reports, one per line

 private:
  std::vector<std::shared_ptr<Layer>> layers_;
  std::vector<std::string> types_;
  std::vector<Tensor> outputs_;  // [max_batch, output of layer i]; empty for reshapes
  std::vector<Tensor> views_;    // the current batch's outputs
  Tensor grad_a_, grad_b_;       // ping-pong dLoss/d(activation) buffers
  Tensor input_;                 // the x of the last forward
  Shape output_shape_;
};

}  // namespace dtnn
