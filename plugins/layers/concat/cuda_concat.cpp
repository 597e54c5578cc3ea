// cuda_concat: the concat layer on the GPU, NCHW (parallel paths of CUDA layers joined along
// channels: one strided copy per path). The paths and their shapes are the CPU plugin's
// (merge_blocks.hpp).
#include "cuda_merge_blocks.hpp"
#include "cuda_plugin.hpp"
#include "merge_blocks.hpp"

namespace {

using namespace dtnn;

class CudaConcat final : public ConcatBase {
 public:
  using ConcatBase::ConcatBase;
  void build(const LayerBuildContext& ctx) override {
    cuda::chw_of(ctx, "concat");  // refuses NHWC by name
    ConcatBase::build(ctx);
  }

 protected:
  void copy_pieces(const Tensor& part, const Tensor& whole, const block_geometry::Pieces& g,
                   bool into_whole) const override {
    cuda::copy_pieces(part, whole, g, into_whole);
  }
  void accumulate(Tensor& a, const Tensor& b) const override { cuda::add_into(a, b); }
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaConcat(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"paths": [[{"type": "conv2d", "filters": 4, "kernel": 1}], [],
                            [{"type": "maxpool2d", "pool": 3, "stride": 1, "padding": 1}]]},
     "input_nchw": [2, 5, 5]}]})";

DTNN_CUDA_LAYER("concat", "concat on the GPU (NCHW): paths of CUDA layers joined along channels",
                dtnn::layer_parameters::kBlockParameters, kTwinChecks, create)
