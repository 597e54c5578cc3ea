// cuda_add: the add layer on the GPU (parallel paths of CUDA layers, their outputs summed by
// cuDNN). The paths and their shapes are the CPU plugin's (block_geometry.hpp).
#include "block_ops.hpp"
#include "cuda_plugin.hpp"
#include "dtnn/block_layer.hpp"

namespace {

using namespace dtnn;

class CudaAdd final : public BlockLayer {
 public:
  using BlockLayer::BlockLayer;
  std::string type() const override { return "add"; }

 protected:
  Shape merged_shape(const std::vector<Shape>& paths) const override {
    return block_geometry::sum_shape(paths);
  }
  void merge(const std::vector<const Tensor*>& outputs, Tensor& y) const override {
    DTNN_CUDA(cudaMemcpyAsync(y.raw(), outputs[0]->raw(), y.bytes(), cudaMemcpyDeviceToDevice,
                              cuda::Context::get().stream()));
    for (std::size_t p = 1; p < outputs.size(); ++p) cuda::add_into(y, *outputs[p]);
  }
  const Tensor& share(const Tensor& dy, std::size_t, Tensor&) const override { return dy; }
  bool shares_need_buffers() const override { return false; }
  void accumulate(Tensor& a, const Tensor& b) const override { cuda::add_into(a, b); }
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaAdd(p); }

}  // namespace

DTNN_CUDA_PLUGIN("layer", "cuda_add", "add on the GPU: paths of CUDA layers, summed by cuDNN",
                 R"({"paths": [[], []]})", create)
