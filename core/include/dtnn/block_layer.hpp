// BlockLayer: parallel paths of layers applied to one input, their outputs merged into one (the
// add and concat layers, PyDTNN's AdditionBlock and ConcatenationBlock). In a model file:
//   {"type": "add", "paths": [[{"type": "conv2d", ...}, ...], []]}
// An empty path is the identity (a residual shortcut). Backward sends each path its share of dy
// and sums the paths' input gradients.
//
// The paths' buffers live on the build context's device; a device's plugins (cuda_add, cuda_concat,
// cuda_multiplication) override merge, share and accumulate with the device's own operations (the
// host's accumulate refuses device tensors).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/layer_chain.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT BlockLayer : public Layer {
 public:
  explicit BlockLayer(const Params& params);
  ~BlockLayer() override;

  void build(const LayerBuildContext& ctx) override;
  Shape output_shape() const override { return output_shape_; }
  void forward(const Tensor& x, Tensor& y, Mode mode) override;
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override;

  std::vector<Parameter> parameters() override;  // "path<p>.<i>.<type>.<name>"
  std::size_t num_paths() const { return paths_.size(); }
  LayerChain& path(std::size_t p) { return paths_[p]; }
  std::vector<Tensor> state() override;
  std::string attributes() const override;
  std::size_t workspace_bytes() const override;
  std::size_t inner_activation_bytes() const override;  // the paths' outputs
  std::string report() const override;
  // The block's PyDTNN id, then the layers of its paths, path by path.
  void pydtnn_arrays(PydtnnArrays& out, const Shape& input) override;
  std::vector<std::pair<std::string, Layer*>> inner_layers() override;  // "path<p>.<i>"

 protected:
  // The merged per-sample shape, from the paths' output shapes (in memory order of layout()).
  virtual Shape merged_shape(const std::vector<Shape>& paths) const = 0;
  // y = the merge of the paths' outputs.
  virtual void merge(const std::vector<const Tensor*>& outputs, Tensor& y) const = 0;
  // Path p's share of dy: dy itself (add), or a copy of its channels into buffer (concat).
  virtual const Tensor& share(const Tensor& dy, std::size_t p, Tensor& buffer) const = 0;
  // Whether share() writes into its buffer (then build allocates one per path).
  virtual bool shares_need_buffers() const = 0;
  // Whether backward reads path_outputs() (a product's does; a sum's or a concatenation's do not:
  // then, with bf16 saved activations, the first path's output may live in its level's forward
  // buffers, the paths running last to first).
  virtual bool backward_reads_path_outputs() const { return true; }
  // Whether merge takes y holding one path's output already (outputs[p] is y's memory) and merges
  // the others into it (a sum does): then, with bf16 saved activations, the path that runs first
  // writes its output straight into y, and needs no memory of its own for it.
  virtual bool merges_into_a_path_output() const { return false; }
  // a += b, element by element (the paths' input gradients); on the host unless overridden.
  virtual void accumulate(Tensor& a, const Tensor& b) const;

  const std::vector<Shape>& path_shapes() const { return path_shapes_; }
  // The paths' outputs of the last forward (valid until the next one: backward reads them).
  const std::vector<const Tensor*>& path_outputs() const { return outputs_; }
  Layout layout() const { return layout_; }

 private:
  Params params_;
  std::vector<LayerChain> paths_;
  std::vector<Shape> path_shapes_;
  // A path's share of dy (when shares need buffers) and a path's dx before it is added to the
  // others', in the gradient buffers of the paths' level (the model's, or its own).
  std::unique_ptr<GradientBuffers> own_buffers_;
  GradientBuffers* buffers_ = nullptr;
  int level_ = 0;
  Shape output_shape_;
  Layout layout_ = Layout::nhwc;
  std::vector<const Tensor*> outputs_;
  bool last_first_ = false;    // the paths run last to first (backward_reads_path_outputs above)
  std::size_t in_output_ = 0;  // the path whose output forward writes into y (0: none; it runs
                               // first of the last-first paths, so it is never path 0)
};

}  // namespace dtnn
