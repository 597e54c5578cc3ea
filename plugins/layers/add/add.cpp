// add: the sum of parallel paths' outputs (PyDTNN's AdditionBlock; a ResNet block is a path of
// layers beside an empty path, the identity shortcut). Every path must give the same shape.
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "merge_blocks.hpp"

namespace {

using namespace dtnn;

class Add final : public AddBase {
 public:
  using AddBase::AddBase;

 protected:
  // y may hold one path's output already (the first path's, where y is its output_buffer; with
  // bf16 saved activations, the path that wrote into y): the others are added to it.
  void merge(const std::vector<const Tensor*>& outputs, Tensor& y) const override {
    std::size_t held = outputs.size();
    for (std::size_t p = 0; p < outputs.size(); ++p)
      if (outputs[p]->raw() == y.raw()) held = p;
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      T* __restrict yp = y.data<T>();
      bool copy = held == outputs.size();  // y holds no output yet: the first one is copied
      for (std::size_t p = 0; p < outputs.size(); ++p) {
        if (p == held) continue;
        const T* __restrict op = outputs[p]->data<T>();
        if (copy)
          parallel_for(y.numel(), kParallelGrain, [&](std::int64_t i) { yp[i] = op[i]; });
        else
          parallel_for(y.numel(), kParallelGrain, [&](std::int64_t i) { yp[i] += op[i]; });
        copy = false;
      }
    });
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new Add(p); }

}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"paths": [[{"type": "conv2d", "filters": 2, "kernel": 3, "padding": 1}, {"type": "relu"}, {"type": "conv2d", "filters": 2, "kernel": 3, "padding": 1}], []]}, "input": [4, 3, 2]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "add",
                   .description =
                       "sum of parallel paths of layers (an empty path is the identity shortcut)",
                   .parameters = dtnn::layer_parameters::kBlockParameters, .traits = kTraits,
                   .factory = create)
