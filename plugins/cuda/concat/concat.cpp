// cuda_concat: the concat layer on the GPU, NCHW (parallel paths of CUDA layers joined along
// channels: one strided copy per path). The paths and their shapes are the CPU plugin's
// (block_geometry.hpp).
#include "block_ops.hpp"
#include "cuda_plugin.hpp"
#include "dtnn/block_layer.hpp"

namespace {

using namespace dtnn;

class CudaConcat final : public BlockLayer {
 public:
  using BlockLayer::BlockLayer;
  std::string type() const override { return "concat"; }
  void build(const LayerBuildContext& ctx) override {
    cuda::chw_of(ctx, "concat");  // refuses NHWC by name
    BlockLayer::build(ctx);
  }

 protected:
  Shape merged_shape(const std::vector<Shape>& paths) const override {
    return block_geometry::concat_shape(paths, layout());
  }
  void merge(const std::vector<const Tensor*>& outputs, Tensor& y) const override {
    for (std::size_t p = 0; p < outputs.size(); ++p) copy(*outputs[p], y, p, true);
  }
  const Tensor& share(const Tensor& dy, std::size_t p, Tensor& buffer) const override {
    copy(buffer, dy, p, false);
    return buffer;
  }
  bool shares_need_buffers() const override { return true; }
  void accumulate(Tensor& a, const Tensor& b) const override { cuda::add_into(a, b); }

 private:
  void copy(const Tensor& part, const Tensor& whole, std::size_t p, bool into_whole) const {
    cuda::copy_pieces(part, whole,
                      block_geometry::pieces_of(path_shapes(), layout(), p, part.numel(),
                                                whole.numel()),
                      into_whole);
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaConcat(p); }

}  // namespace

DTNN_CUDA_PLUGIN("layer", "cuda_concat",
                 "concat on the GPU (NCHW): paths of CUDA layers joined along channels",
                 R"({"paths": [[], []]})", create)
