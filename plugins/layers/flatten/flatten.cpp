// flatten: y[N, prod(shape)] is x[N, shape...] in memory order (HWC for NHWC, CHW for NCHW).
#include "dtnn/layer.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/pydtnn_arrays.hpp"

namespace {

using namespace dtnn;

class Flatten final : public Layer {
 public:
  std::string type() const override { return "flatten"; }
  void build(const LayerBuildContext& ctx) override { out_ = Shape{ctx.input_shape.numel()}; }
  Shape output_shape() const override { return out_; }
  // An fc after it orders its PyDTNN rows by this input.
  void pydtnn_arrays(PydtnnArrays& out, const Shape& input) override {
    out.layer("Flatten");
    out.flattened = input;
  }
  // A chain aliases its output to its input (traits.reshape); these are for direct use.
  void forward(const Tensor& x, Tensor& y, Mode) override { y.copy_from(x); }
  void backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (dx) dx->copy_from(dy);
  }

 private:
  Shape out_;
};

Plugin* create(const Params&, const PluginContext&) { return new Flatten(); }

}  // namespace

// Its output is its input's memory (dtnn/plugin_traits.hpp); the settings its conformance checks
// run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"reshape": true, "conformance": [
    {"input": [3, 2, 2]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "flatten",
                   .description = "reshape each sample to one dimension", .parameters = "{}",
                   .traits = kTraits, .factory = create)
