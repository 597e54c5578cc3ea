// direct: convolution computed straight from the tensors, without any GEMM or column matrix
// (PyDTNN's ConvDirect). Each layout has the engine that suits where its channels lie:
//   NHWC  channel_blocked.hpp  channels innermost: vectors along channels, blocked over channels
//                              and output pixels; any stride, padding and dilation; no workspace
//                              beyond a zero row and row pointers.
//   NCHW  planar.hpp           planes innermost: vectors along image rows over zero-padded per-
//                              sample tiles; stride 1, no dilation.
#include <memory>

#include "channel_blocked.hpp"
#include "dtnn/plugin_api.hpp"
#include "planar.hpp"

namespace {

using namespace dtnn;

class Direct final : public ConvAlgorithm {
 public:
  std::string name() const override { return "direct"; }

  bool supports(const ConvGeometry& g, ConvPass, std::string& why_not) const override {
    return g.layout == Layout::nhwc || direct::Planar::supports(g, why_not);
  }

  void prepare(const ConvGeometry& g) override {
    nhwc_ = g.layout == Layout::nhwc;
    if (nhwc_) {
      blocked_.prepare(g);
    } else {
      planar_ = std::make_unique<direct::Planar>();
      planar_->prepare(g);
    }
    workspace().reserve(workspace_bytes());
  }

  std::size_t workspace_bytes() const override {
    return nhwc_ ? blocked_.workspace_bytes() : planar_->workspace_bytes();
  }

  void forward(const Tensor& x, const Tensor& w, Tensor& y) override {
    if (!nhwc_) return planar_->forward(x, w, y, claim_workspace());
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      blocked_.use<T>(claim_workspace());
      blocked_.forward(x.data<T>(), w.data<T>(), y.data<T>(), x.dim(0));
    });
  }
  void backward_data(const Tensor& dy, const Tensor& w, Tensor& dx) override {
    if (!nhwc_) return planar_->backward_data(dy, w, dx, claim_workspace());
    dispatch_dtype(dy.dtype(), [&](auto z) {
      using T = decltype(z);
      blocked_.use<T>(claim_workspace());
      blocked_.backward_data(dy.data<T>(), w.data<T>(), dx.data<T>(), dy.dim(0));
    });
  }
  void backward_filter(const Tensor& x, const Tensor& dy, Tensor& dw) override {
    if (!nhwc_) return planar_->backward_filter(x, dy, dw, claim_workspace());
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      blocked_.use<T>(claim_workspace());
      blocked_.backward_filter(x.data<T>(), dy.data<T>(), dw.data<T>(), x.dim(0));
    });
  }

 private:
  bool nhwc_ = true;
  direct::ChannelBlocked blocked_;
  std::unique_ptr<direct::Planar> planar_;
};

Plugin* create(const Params&, const PluginContext&) { return new Direct(); }

}  // namespace

DTNN_PLUGIN("conv", "direct",
            "direct convolution without a column matrix: NHWC blocked over channels and output "
            "pixels (any geometry, no workspace); NCHW on planar tiles (stride 1, no dilation)",
            "{}", create)
