// positional_encoding: adds each position's vector to a sequence. x, y: [N, T, D], p: [T, D],
// y[n, t] = x[n, t] + p[t].
//   sinusoidal (Vaswani et al. 2017): p[t, 2i] = sin(t / 10000^(2i/D)), p[t, 2i+1] = cos(...);
//              fixed, no parameters;
//   learned:   p is a parameter [T, D]; dp += the batch's sum of dy.
// dx = dy.
#include <string>

#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "positional_encoding_base.hpp"

namespace {

using namespace dtnn;

class PositionalEncoding final : public layer_parameters::PositionalEncodingBase {
 public:
  using PositionalEncodingBase::PositionalEncodingBase;
  void build(const LayerBuildContext& ctx) override { build_table(ctx, Device::cpu); }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t m = shape_.numel();
      const T *xp = x.data<T>(), *p = p_.data<T>();
      T* yp = y.data<T>();
      parallel_for(x.dim(0), 8, [&](std::int64_t n) {
        const T* __restrict xr = xp + n * m;
        const T* __restrict pr = p;
        T* __restrict yr = yp + n * m;
        for (std::int64_t i = 0; i < m; ++i) yr[i] = xr[i] + pr[i];
      });
    });
  }

  void backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (dx) dx->copy_from(dy);
    if (!s_.learned) return;
    dispatch_dtype(dy.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t m = shape_.numel();
      const T* dyp = dy.data<T>();
      T* dp = dp_.data<T>();
      parallel_chunks(m, kParallelGrain, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t n = 0; n < dy.dim(0); ++n) {
          const T* __restrict g = dyp + n * m;
          T* __restrict d = dp;
          for (std::int64_t i = begin; i < end; ++i) d[i] += g[i];
        }
      });
    });
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new PositionalEncoding(p); }

}  // namespace

constexpr const char* kTraits = R"({"conformance": [
    {"params": {"kind": "sinusoidal"}, "input": [5, 6]},
    {"params": {"kind": "learned"}, "input": [4, 3], "batch": 3}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "positional_encoding",
                   .description =
                       "adds a position's vector to each position: sinusoidal or learned",
                   .parameters = dtnn::layer_parameters::kPositionalEncodingParameters,
                   .traits = kTraits, .factory = create)
