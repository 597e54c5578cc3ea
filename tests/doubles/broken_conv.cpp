// Test double for the conformance harness: the reference convolution with one fault, chosen by
// the parameter "fault", which the harness must catch:
//   "forward"          one output value off by 1e-3
//   "backward_data"    dx scaled by 1.001
//   "filter_assigns"   backward_filter overwrites dw instead of accumulating into it
//   "overrun"          forward writes one value past its output
//   "none"             reference itself
#include <cstring>
#include <string>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/registry.hpp"

namespace {
using namespace dtnn;

void add_to(Tensor& t, std::int64_t i, double v) {
  dispatch_dtype(t.dtype(), [&](auto z) { t.data<decltype(z)>()[i] += decltype(z)(v); });
}

class Broken final : public ConvAlgorithm {
 public:
  Broken(const Params& p, const PluginContext& ctx)
      : inner_(ctx.registry->create_as<ConvAlgorithm>("conv", "reference", Params())),
        fault_(p.get_string("fault")) {}
  std::string name() const override { return "test_broken"; }
  bool supports(const ConvGeometry& g, ConvPass p, std::string& why) const override {
    return inner_->supports(g, p, why);
  }
  void prepare(const ConvGeometry& g) override { inner_->prepare(g); }
  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    inner_->forward(x, w, y);
    if (fault_ == "forward") add_to(y, y.numel() / 2, 1e-3);
    if (fault_ == "overrun")
      std::memset(static_cast<char*>(y.raw()) + y.bytes(), 0, dtype_size(y.dtype()));
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    inner_->backward_data(dy, w, dx);
    if (fault_ == "backward_data")
      for (std::int64_t i = 0; i < dx.numel(); ++i) scale(dx, i);
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    if (fault_ == "filter_assigns") dw.fill_zero();
    inner_->backward_filter(x, dy, dw);
  }

 private:
  static void scale(Tensor& t, std::int64_t i) {
    dispatch_dtype(t.dtype(), [&](auto z) { t.data<decltype(z)>()[i] *= decltype(z)(1.001); });
  }
  std::shared_ptr<ConvAlgorithm> inner_;
  std::string fault_;
};

Plugin* create(const Params& p, const PluginContext& ctx) { return new Broken(p, ctx); }
}  // namespace

DTNN_PLUGIN("conv", "test_broken", "test double: reference with a fault the harness must catch",
            R"({"fault": "none"})", create)
