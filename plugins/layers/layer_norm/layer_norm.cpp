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
#include "dtnn/reductions.hpp"
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
    row_scratch_ = Tensor::empty(Shape{threads_, 2 * width_}, ctx.dtype);
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
      // The sums in vector lanes (dtnn/reductions.hpp); y holds x - mean in between.
      const T mean = reduce::sum(xr, d) / T(d);
      for (std::int64_t i = 0; i < d; ++i) yr[i] = xr[i] - mean;
      const T rstd = T(1) / std::sqrt(reduce::dot(yr, yr, d) / T(d) + epsilon);
      stats[2 * r] = mean;
      stats[2 * r + 1] = rstd;
      for (std::int64_t i = 0; i < d; ++i) yr[i] = yr[i] * rstd * gamma[i] + beta[i];
    }
  }

  // One row's share of dgamma and dbeta, and its dx (when dx is not null); xhat and g are the
  // row's scratch. (A function of its own: restrict on its parameters holds, where OpenMP's
  // outlined loop body dropped it from the pointers it captured, and the loops stayed scalar.)
  template <class T>
  static void backward_row(std::int64_t d, const T* __restrict x, const T* __restrict dy,
                           const T* __restrict gamma, T mean, T rstd, T* __restrict dgamma,
                           T* __restrict dbeta, T* __restrict xhat, T* __restrict g,
                           T* __restrict dx) {
    for (std::int64_t i = 0; i < d; ++i) {
      xhat[i] = (x[i] - mean) * rstd;
      g[i] = dy[i] * gamma[i];
      dgamma[i] += dy[i] * xhat[i];
      dbeta[i] += dy[i];
    }
    if (!dx) return;
    const T mean_g = reduce::sum(g, d) / T(d), mean_gx = reduce::dot(g, xhat, d) / T(d);
    for (std::int64_t i = 0; i < d; ++i) dx[i] = rstd * (g[i] - mean_g - xhat[i] * mean_gx);
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
      const int t = omp_get_thread_num();
      T* pg = partial + t * 2 * d;  // dgamma, then dbeta
      T* scratch = row_scratch_.data<T>() + t * 2 * d;
#pragma omp for schedule(static)
      for (std::int64_t r = 0; r < rows; ++r)
        backward_row(d, xp + r * d, dyp + r * d, gamma, stats[2 * r], stats[2 * r + 1], pg, pg + d,
                     scratch, scratch + d, dxp ? dxp + r * d : nullptr);
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
  Tensor row_scratch_;  // [threads, 2 D]: a thread's row of xhat and of dy * gamma in backward
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
