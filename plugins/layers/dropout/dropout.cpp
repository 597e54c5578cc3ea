// dropout: in training y = x * m / (1 - rate) with m ~ Bernoulli(1 - rate) per element; in
// evaluation y = x. Backward: dx = dy * m / (1 - rate). A new mask is drawn once per training step:
// by the first training forward after a backward. Forwards within a step (finite differences, a
// re-run) see the same mask, so the layer is a deterministic function within a step.
#include <cstdint>

#include "dropout_base.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/rng.hpp"

namespace {

using namespace dtnn;

class Dropout final : public layer_parameters::DropoutBase {
 public:
  using DropoutBase::DropoutBase;

  void build(const LayerBuildContext& ctx) override {
    build_state(ctx);
    mask_ = Tensor::empty(shape_.with_batch(ctx.max_batch), ctx.dtype, ctx.layout);
  }

  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    if (mode == Mode::eval || rate_ == 0.0) {
      y.copy_from(x);
      return;
    }
    const std::uint64_t stream = mask_stream();
    // keep when the element's hash falls at or above rate * 2^32: counter-based, so every thread
    // draws the same numbers whatever the thread count.
    const auto threshold = static_cast<std::uint64_t>(rate_ * 4294967296.0);
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T scale = T(1.0 / (1.0 - rate_));
      const T* xp = x.data<T>();
      T *yp = y.data<T>(), *mp = mask_.data<T>();
      parallel_for(x.numel(), kParallelGrain, [&](std::int64_t i) {
        Rng r(stream + static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL);
        mp[i] = (r.next() >> 32) >= threshold ? scale : T(0);
        yp[i] = xp[i] * mp[i];
      });
    });
  }

  void backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor* dx) override {
    mask_used();
    if (!dx) return;
    if (rate_ == 0.0) {
      dx->copy_from(dy);
      return;
    }
    dispatch_dtype(dy.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *dyp = dy.data<T>(), *mp = mask_.data<T>();
      T* dxp = dx->data<T>();
      parallel_for(dy.numel(), kParallelGrain, [&](std::int64_t i) { dxp[i] = dyp[i] * mp[i]; });
    });
  }

 private:
  Tensor mask_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Dropout(p); }

}  // namespace

// The settings its conformance checks run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({"conformance": [
    {"params": {"rate": 0.3}, "input": [4, 3, 2]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "dropout",
                   .description =
                       "inverted dropout: zeroes a fraction 'rate' of values in training",
                   .parameters = dtnn::layer_parameters::kDropoutParameters, .traits = kTraits,
                   .factory = create)
