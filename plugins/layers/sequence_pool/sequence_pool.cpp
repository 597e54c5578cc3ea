// sequence_pool: one vector for a whole sequence, x: [N, T, D] -> y: [N, D].
//   "mean":   y = (1/L) sum_{t<L} x[t];   dx[t] = dy / L for t < L, 0 after; L = T, or the
//             sample's length before its padding (dtnn/sequence_context.hpp)
//   "first":  y = x[0] (BERT's [CLS] position);   dx[0] = dy, dx[t > 0] = 0
#include <algorithm>
#include <string>

#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"
#include "dtnn/sequence_context.hpp"
#include "sequence_pool_base.hpp"

namespace {

using namespace dtnn;

class SequencePool final : public layer_parameters::SequencePoolBase {
 public:
  using SequencePoolBase::SequencePoolBase;
  void build(const LayerBuildContext& ctx) override { lengths_ = build_shape(ctx); }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* xp = x.data<T>();
      T* yp = y.data<T>();
      parallel_for(x.dim(0), 4, [&](std::int64_t n) {
        const T* xs = xp + n * t_ * d_;
        T* __restrict out = yp + n * d_;
        std::copy_n(xs, d_, out);
        if (!s_.mean) return;
        const std::int64_t length = positions(n);
        for (std::int64_t t = 1; t < length; ++t) {
          const T* __restrict row = xs + t * d_;
          for (std::int64_t j = 0; j < d_; ++j) out[j] += row[j];
        }
        for (std::int64_t j = 0; j < d_; ++j) out[j] /= T(length);
      });
    });
  }

  void backward(const Tensor&, const Tensor&, const Tensor& dy, Tensor* dx) override {
    if (!dx) return;
    dispatch_dtype(dy.dtype(), [&](auto z) {
      using T = decltype(z);
      const T* g = dy.data<T>();
      T* dxp = dx->data<T>();
      parallel_for(dy.dim(0), 4, [&](std::int64_t n) {
        T* out = dxp + n * t_ * d_;
        const std::int64_t length = s_.mean ? positions(n) : 1;
        for (std::int64_t t = 0; t < t_; ++t)
          for (std::int64_t j = 0; j < d_; ++j)
            out[t * d_ + j] = t < length ? g[n * d_ + j] / T(length) : T(0);
      });
    });
  }

 private:
  // The positions sample n averages over: those before its padding.
  std::int64_t positions(std::int64_t n) const { return lengths_ ? lengths_->keys(n, t_) : t_; }

  std::shared_ptr<const SequenceLengths> lengths_;
};

Plugin* create(const Params& p, const PluginContext&) { return new SequencePool(p); }

}  // namespace

constexpr const char* kTraits = R"({"conformance": [
    {"input": [5, 3]}, {"params": {"mode": "first"}, "input": [4, 2], "batch": 3},
    {"input": [5, 2], "lengths": [2, 5, 1, 3]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "sequence_pool",
                   .description = "one vector per sequence: the mean over positions, or the first",
                   .parameters = dtnn::layer_parameters::kSequencePoolParameters, .traits = kTraits,
                   .factory = create)
