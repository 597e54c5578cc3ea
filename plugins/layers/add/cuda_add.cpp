// cuda_add: the add layer on the GPU (parallel paths of CUDA layers, their outputs summed by
// cuDNN). The paths and their shapes are the CPU plugin's (merge_blocks.hpp).
#include "cuda_merge_blocks.hpp"
#include "cuda_plugin.hpp"
#include "merge_blocks.hpp"

namespace {

using namespace dtnn;

class CudaAdd final : public AddBase {
 public:
  using AddBase::AddBase;

 protected:
  void merge(const std::vector<const Tensor*>& outputs, Tensor& y) const override {
    if (outputs[0]->raw() != y.raw())  // else y is the first path's output (output_buffer)
      DTNN_CUDA(cudaMemcpyAsync(y.raw(), outputs[0]->raw(), y.bytes(), cudaMemcpyDeviceToDevice,
                                cuda::Context::get().stream()));
    for (std::size_t p = 1; p < outputs.size(); ++p) cuda::add_into(y, *outputs[p]);
  }
  void accumulate(Tensor& a, const Tensor& b) const override { cuda::add_into(a, b); }
};

Plugin* create(const Params& p, const PluginContext&) { return new CudaAdd(p); }

}  // namespace

constexpr const char* kTwinChecks = R"({"twin_checks": [
    {"params": {"paths": [[{"type": "conv2d", "filters": 3, "kernel": 3, "padding": 1},
                            {"type": "batchnorm"}], []]},
     "input_nchw": [3, 6, 6]}]})";

DTNN_CUDA_LAYER("add", "add on the GPU: paths of CUDA layers, summed by cuDNN",
                dtnn::layer_parameters::kBlockParameters, kTwinChecks, create)
