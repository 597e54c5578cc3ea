// layer_norm (Ba et al. 2016): normalises each position's features (the last axis) to zero mean
// and unit variance, then scales and shifts them:
//   y = gamma * xhat + beta,  xhat = (x - mean) * rstd,  rstd = 1 / sqrt(var + epsilon),
// mean and var over the last axis (var biased, as PyTorch's). The same in training and evaluation.
// Backward, per row of D features:
//   dgamma += sum_rows dy * xhat,  dbeta += sum_rows dy,
//   dx = rstd * (g - mean(g) - xhat * mean(g * xhat)),  g = dy * gamma.
#include <omp.h>

#include <cmath>
#include <string>

#include "dtnn/layer.hpp"
#include "dtnn/plugin_api.hpp"
#include "layer_norm_base.hpp"

namespace {

using namespace dtnn;

class LayerNorm final : public layer_parameters::LayerNormBase {
 public:
  using LayerNormBase::LayerNormBase;

  void build(const LayerBuildContext& ctx) override {
    build_weights(ctx, Device::cpu);
    stats_ = Tensor::empty(Shape{ctx.max_batch * rows_, 2}, ctx.dtype);  // mean, rstd per row
    threads_ = std::max(1, omp_get_max_threads());
    partial_ = Tensor::empty(Shape{threads_, 2 * width_}, ctx.dtype);
  }

  void forward(const Tensor& x, Tensor& y, Mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, y); });
  }
  void backward(const Tensor& x, const Tensor&, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) { backward_t<decltype(z)>(x, dy, dx); });
  }

 private:
  template <class T>
  void forward_t(const Tensor& x, Tensor& y) {
    const std::int64_t rows = x.dim(0) * rows_, d = width_;
    const T *xp = x.data<T>(), *gamma = gamma_.data<T>(), *beta = beta_.data<T>();
    T *yp = y.data<T>(), *stats = stats_.data<T>();
    const T epsilon = T(epsilon_);
#pragma omp parallel for schedule(static) if (rows * d >= 16384)
    for (std::int64_t r = 0; r < rows; ++r) {
      const T* __restrict xr = xp + r * d;
      T* __restrict yr = yp + r * d;
      T sum = 0;
      for (std::int64_t i = 0; i < d; ++i) sum += xr[i];
      const T mean = sum / T(d);
      T squares = 0;
      for (std::int64_t i = 0; i < d; ++i) squares += (xr[i] - mean) * (xr[i] - mean);
      const T rstd = T(1) / std::sqrt(squares / T(d) + epsilon);
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
      for (std::int64_t i = 0; i < d; ++i) yr[i] = (xr[i] - mean) * rstd * gamma[i] + beta[i];
    }
  }

  template <class T>
  void backward_t(const Tensor& x, const Tensor& dy, Tensor* dx) {
    const std::int64_t rows = x.dim(0) * rows_, d = width_;
    const T *xp = x.data<T>(), *dyp = dy.data<T>(), *gamma = gamma_.data<T>(),
            *stats = stats_.data<T>();
    T* dxp = dx ? dx->data<T>() : nullptr;
    T* partial = partial_.data<T>();
    const bool parallel = rows * d >= 16384;
    const int used = parallel ? threads_ : 1;
    std::fill_n(partial, used * 2 * d, T(0));
#pragma omp parallel if (parallel) num_threads(used)
    {
      T* __restrict pg = partial + omp_get_thread_num() * 2 * d;  // dgamma, then dbeta
      T* __restrict pb = pg + d;
#pragma omp for schedule(static)
      for (std::int64_t r = 0; r < rows; ++r) {
        const T* __restrict xr = xp + r * d;
        const T* __restrict g = dyp + r * d;
        const T mean = stats[2 * r], rstd = stats[2 * r + 1];
        T sum_g = 0, sum_gx = 0;
        for (std::int64_t i = 0; i < d; ++i) {
          const T xhat = (xr[i] - mean) * rstd;
          pg[i] += g[i] * xhat;
          pb[i] += g[i];
          sum_g += g[i] * gamma[i];
          sum_gx += g[i] * gamma[i] * xhat;
        }
        if (!dxp) continue;
        T* __restrict out = dxp + r * d;
        const T mean_g = sum_g / T(d), mean_gx = sum_gx / T(d);
        for (std::int64_t i = 0; i < d; ++i) {
          const T xhat = (xr[i] - mean) * rstd;
          out[i] = rstd * (g[i] * gamma[i] - mean_g - xhat * mean_gx);
        }
      }
    }
    T *dgamma = dgamma_.data<T>(), *dbeta = dbeta_.data<T>();
    for (int t = 0; t < used; ++t)
      for (std::int64_t i = 0; i < d; ++i) {
        dgamma[i] += partial[t * 2 * d + i];
        dbeta[i] += partial[t * 2 * d + d + i];
      }
  }

  int threads_ = 1;
  Tensor stats_, partial_;
};

Plugin* create(const Params& p, const PluginContext&) { return new LayerNorm(p); }

}  // namespace

constexpr const char* kTraits = R"({"conformance": [
    {"input": [4, 6]},
    {"input": [7], "batch": 3},
    {"params": {"epsilon": 0.01}, "input": [2, 3, 5]}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "layer_norm",
                   .description = "layer normalisation over the last axis, with scale and shift",
                   .parameters = dtnn::layer_parameters::kLayerNormParameters, .traits = kTraits,
                   .factory = create)
