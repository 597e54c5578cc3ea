// batchnorm: batch normalisation per channel (Ioffe & Szegedy; PyDTNN's BatchNormalization).
//   train:  y = gamma * (x - mean_B) / sqrt(var_B + epsilon) + beta, with mean_B and the biased
//           var_B over the batch and every pixel of a channel; then
//           running = momentum * running + (1 - momentum) * batch statistic (PyDTNN's and
//           Keras's convention: momentum 0.9 keeps 90% of the old value)
//   eval:   the same with the running statistics.
//   backward (train), with xhat = (x - mean_B) / sqrt(var_B + epsilon) over the M values of a
//   channel:  dgamma += sum dy*xhat,  dbeta += sum dy,
//             dx = gamma / sqrt(var_B + epsilon) * (dy - sum(dy)/M - xhat * sum(dy*xhat)/M)
// sync_stats: the batch statistics (and the two sums of backward) are taken over every rank's
// samples, as one large batch, at the cost of two small allreduces per pass.
// activation "relu": batchnorm+relu fused (PyDTNN's fusion): y = max(0, ...) in the same pass, and
// backward masks dy with y > 0 before its own work; exact, in training and inference.
//
// The input is seen as [outer, C, inner]: NHWC outer = samples*pixels, inner = 1; NCHW outer =
// samples, inner = pixels. Sums are accumulated per thread in double, then added. NHWC layers whose
// channels repeat every 16, 32, 48 or 64 values run as flat vector loops over that pattern
// (channel_pattern.hpp).
#include <omp.h>

#include <cmath>
#include <vector>

#include "batchnorm_base.hpp"
#include "channel_pattern.hpp"
#include "dtnn/communicator.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;
using batchnorm::kept;

class BatchNorm final : public layer_parameters::BatchnormBase {
 public:
  explicit BatchNorm(const Params& p) : BatchnormBase(layer_parameters::Batchnorm(p)) {}

  std::string attributes() const override {
    return "momentum=" + format(s_.momentum) + " epsilon=" + format(s_.epsilon) +
           (s_.sync_stats ? " sync_stats" : "") + (s_.relu ? " +relu" : "");
  }

  void build(const LayerBuildContext& ctx) override {
    const Shape& in = ctx.input_shape;
    const bool nhwc = ctx.layout == Layout::nhwc;
    build_parameters(ctx, nhwc ? in[in.rank() - 1] : in[0], Device::cpu);
    inner_ = nhwc ? 1 : in.numel() / c_;
    rows_per_sample_ = nhwc ? in.numel() / c_ : 1;
    pattern_ = nhwc ? batchnorm::pattern_of(c_) : 0;
    threads_ = std::max(1, omp_get_max_threads());
    partial_.assign(static_cast<std::size_t>(threads_ * 2 * c_), 0.0);
    local_.assign(static_cast<std::size_t>(2 * c_ + 1), 0.0);
    total_ = local_;
    coef_ = Tensor::empty(Shape{3 * c_}, ctx.dtype);
    run_sums_ = Tensor::empty(Shape{threads_ * 2 * c_}, ctx.dtype);
    mean_.assign(static_cast<std::size_t>(c_), 0.0);
    inv_std_.assign(static_cast<std::size_t>(c_), 0.0);
    communicator_ = s_.sync_stats ? ctx.communicator : nullptr;
  }

  void forward(const Tensor& x, Tensor& y, Mode mode) override {
    dispatch_dtype(x.dtype(), [&](auto z) { forward_t<decltype(z)>(x, y, mode); });
  }
  bool backward_reads_output() const override { return s_.relu; }  // the fused relu's mask
  void backward(const Tensor& x, const Tensor& y, const Tensor& dy, Tensor* dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      // Through the fused relu: dy where y > 0, else 0, as the passes read it.
      backward_t<T>(x, dy, s_.relu ? y.data<T>() : nullptr, dx);
    });
  }

 private:
  static std::string format(double v) {
    std::string s = std::to_string(v);
    while (s.size() > 1 && s.back() == '0') s.pop_back();
    return s;
  }

  // Per channel c, over the channel's values i: local_[c] = sum u[i] and local_[C + c] =
  // sum u[i] * (v[i] - shift[c]); local_[2C] = how many values per channel. With keep, u[i] counts
  // only where keep[i] > 0 (dy through a fused relu whose output is keep). total_ = the same
  // over every rank (with sync_stats; else a copy). Runs of kRun rows (NHWC) or kRun^2 pixels
  // of a plane (NCHW) are summed in T, vectorised along channels or pixels, then added in double.
  template <class T>
  void channel_sums(std::int64_t batch, const T* u, const T* v, const T* shift,
                    const T* keep = nullptr) {
    if (keep) return channel_sums_t<T, true>(batch, u, v, shift, keep);
    channel_sums_t<T, false>(batch, u, v, shift, u);
  }
  template <class T, bool Keep>
  void channel_sums_t(std::int64_t batch, const T* u, const T* v, const T* shift, const T* keep) {
    constexpr std::int64_t kRun = 16;
    const std::int64_t outer = batch * rows_per_sample_;
    std::fill(partial_.begin(), partial_.end(), 0.0);
#pragma omp parallel
    {
      const int t = omp_get_thread_num();
      double* mine = partial_.data() + t * 2 * c_;
      T* run = run_sums_.data<T>() + t * 2 * c_;  // [2C] sums of the current run
      if (pattern_ > 0) {  // NHWC in chunks of the channels' pattern (channel_pattern.hpp)
        batchnorm::with_pattern(pattern_, [&]<int P>() {
          T shifts[P];
          for (int j = 0; j < P; ++j) shifts[j] = shift[j % c_];
#pragma omp for schedule(static)
          for (std::int64_t r0 = 0; r0 < outer; r0 += kRun) {
            // kRun rows are whole chunks; only the batch's last run may end inside one.
            const std::int64_t begin = r0 * c_, end = std::min(outer, r0 + kRun) * c_;
            const std::int64_t whole = (end - begin) / P * P;
            T s[2 * P];
            batchnorm::pattern_sums<T, P, Keep>(u + begin, v + begin, keep + begin, whole, shifts,
                                                s, s + P);
            for (int j = 0; j < P; ++j) {
              mine[j % c_] += s[j];
              mine[c_ + j % c_] += s[P + j];
            }
            for (std::int64_t i = begin + whole; i < end; ++i) {
              const T ui = kept<Keep>(u[i], keep[i]);
              mine[i % c_] += ui;
              mine[c_ + i % c_] += ui * (v[i] - shift[i % c_]);
            }
          }
        });
      } else if (inner_ == 1) {  // NHWC: a row holds one value of every channel
#pragma omp for schedule(static)
        for (std::int64_t r0 = 0; r0 < outer; r0 += kRun) {
          std::fill(run, run + 2 * c_, T(0));
          for (std::int64_t r = r0; r < std::min(outer, r0 + kRun); ++r) {
            const T* __restrict ur = u + r * c_;
            const T* __restrict vr = v + r * c_;
            const T* __restrict kr = keep + r * c_;
            T* __restrict s1 = run;
            T* __restrict s2 = run + c_;
            for (std::int64_t c = 0; c < c_; ++c) {
              const T uc = kept<Keep>(ur[c], kr[c]);
              s1[c] += uc;
              s2[c] += uc * (vr[c] - shift[c]);
            }
          }
          for (std::int64_t k = 0; k < 2 * c_; ++k) mine[k] += run[k];
        }
      } else {  // NCHW: a plane per channel
#pragma omp for schedule(static)
        for (std::int64_t r = 0; r < outer; ++r)
          for (std::int64_t c = 0; c < c_; ++c) {
            const T* __restrict up = u + (r * c_ + c) * inner_;
            const T* __restrict vp = v + (r * c_ + c) * inner_;
            const T* __restrict kp = keep + (r * c_ + c) * inner_;
            const T m = shift[c];
            for (std::int64_t i0 = 0; i0 < inner_; i0 += kRun * kRun) {
              T s1 = 0, s2 = 0;
              for (std::int64_t i = i0; i < std::min(inner_, i0 + kRun * kRun); ++i) {
                const T ui = kept<Keep>(up[i], kp[i]);
                s1 += ui;
                s2 += ui * (vp[i] - m);
              }
              mine[c] += s1;
              mine[c_ + c] += s2;
            }
          }
      }
    }
    for (std::int64_t k = 0; k < 2 * c_; ++k) {
      double sum = 0;
      for (int t = 0; t < threads_; ++t) sum += partial_[static_cast<std::size_t>(t * 2 * c_ + k)];
      local_[static_cast<std::size_t>(k)] = sum;
    }
    local_[static_cast<std::size_t>(2 * c_)] = static_cast<double>(outer * inner_);
    total_ = local_;  // same size: no allocation
    if (communicator_)
      communicator_->allreduce_sum(total_.data(), total_.size(), DType::float64,
                                   "batchnorm statistics");
  }

  // out[i] = a[c] * u[i] + b[c] * v[i] + d[c] for every value i of every channel c (coefficients
  // from the coef_ rows a, b, d), then max(out[i], 0) with Relu; with keep, u[i] counts only where
  // keep[i] > 0.
  template <class T, bool Relu = false>
  void combine(std::int64_t batch, const T* u, const T* v, T* out, const T* keep = nullptr) const {
    if (keep) return combine_t<T, Relu, true>(batch, u, v, out, keep);
    combine_t<T, Relu, false>(batch, u, v, out, u);
  }
  template <class T, bool Relu, bool Keep>
  void combine_t(std::int64_t batch, const T* u, const T* v, T* out, const T* keep) const {
    auto act = [](T value) { return Relu ? std::max(value, T(0)) : value; };
    const T* a = coef_.data<T>();
    const T* b = a + c_;
    const T* d = b + c_;
    if (pattern_ > 0) {  // NHWC in chunks of the channels' pattern (channel_pattern.hpp)
      batchnorm::with_pattern(pattern_, [&]<int P>() {
        T coefficients[3 * P];
        for (int j = 0; j < P; ++j)
          coefficients[j] = a[j % c_], coefficients[P + j] = b[j % c_],
          coefficients[2 * P + j] = d[j % c_];
        const std::int64_t n = batch * rows_per_sample_ * c_, block = 64 * P;
        parallel_for((n + block - 1) / block, 2, [&](std::int64_t k) {
          const std::int64_t begin = k * block, end = std::min(n, begin + block);
          const std::int64_t whole = (end - begin) / P * P;
          batchnorm::pattern_combine<T, P, Relu, Keep>(u + begin, v + begin, keep + begin, whole,
                                                       coefficients, coefficients + P,
                                                       coefficients + 2 * P, out + begin);
          for (std::int64_t i = begin + whole; i < end; ++i)  // the batch's last partial chunk
            out[i] = act(a[i % c_] * kept<Keep>(u[i], keep[i]) + b[i % c_] * v[i] + d[i % c_]);
        });
      });
      return;
    }
    parallel_for(batch * rows_per_sample_, 16, [&](std::int64_t r) {
      if (inner_ == 1) {  // NHWC: one row, every channel
        const T* __restrict ur = u + r * c_;
        const T* __restrict vr = v + r * c_;
        const T* __restrict kr = keep + r * c_;
        T* __restrict o = out + r * c_;
        for (std::int64_t c = 0; c < c_; ++c)
          o[c] = act(a[c] * kept<Keep>(ur[c], kr[c]) + b[c] * vr[c] + d[c]);
        return;
      }
      for (std::int64_t c = 0; c < c_; ++c) {
        const std::int64_t base = (r * c_ + c) * inner_;
        for (std::int64_t i = base; i < base + inner_; ++i)
          out[i] = act(a[c] * kept<Keep>(u[i], keep[i]) + b[c] * v[i] + d[c]);
      }
    });
  }

  template <class T>
  void forward_t(const Tensor& x, Tensor& y, Mode mode) {
    const T* xp = x.data<T>();
    T* rm = running_mean_.data<T>();
    T* rv = running_var_.data<T>();
    if (mode == Mode::train) {
      // sum x and sum x (x - s) with s the running mean, near the batch's mean: then
      // var = sum x (x - s) / M - mean (mean - s) is not the small difference of two large
      // numbers, as E[x^2] - mean^2 would be.
      T* shift = coef_.data<T>();
      for (std::int64_t c = 0; c < c_; ++c) shift[c] = rm[c];
      channel_sums<T>(x.dim(0), xp, xp, shift);
      const double m = total_[static_cast<std::size_t>(2 * c_)];
      for (std::int64_t c = 0; c < c_; ++c) {
        const auto k = static_cast<std::size_t>(c);
        const double mean = total_[k] / m;
        const double var = std::max(
            0.0, total_[k + static_cast<std::size_t>(c_)] / m - mean * (mean - double(shift[c])));
        mean_[k] = mean;
        inv_std_[k] = 1.0 / std::sqrt(var + s_.epsilon);
        rm[c] = static_cast<T>(s_.momentum * rm[c] + (1 - s_.momentum) * mean);
        rv[c] = static_cast<T>(s_.momentum * rv[c] + (1 - s_.momentum) * var);
      }
    } else {
      for (std::int64_t c = 0; c < c_; ++c) {
        mean_[static_cast<std::size_t>(c)] = rm[c];
        inv_std_[static_cast<std::size_t>(c)] = 1.0 / std::sqrt(double(rv[c]) + s_.epsilon);
      }
    }
    // y = gamma * inv_std * x + (beta - gamma * inv_std * mean)
    const T* gamma = gamma_.value.data<T>();
    const T* beta = beta_.value.data<T>();
    T* a = coef_.data<T>();
    for (std::int64_t c = 0; c < c_; ++c) {
      const auto k = static_cast<std::size_t>(c);
      const double scale = gamma[c] * inv_std_[k];
      a[c] = static_cast<T>(scale);
      a[c_ + c] = T(0);
      a[2 * c_ + c] = static_cast<T>(beta[c] - mean_[k] * scale);
    }
    if (s_.relu)
      combine<T, true>(x.dim(0), xp, xp, y.data<T>());
    else
      combine<T>(x.dim(0), xp, xp, y.data<T>());
  }

  // keep: the fused relu's output (dy counts where it is > 0), or null.
  template <class T>
  void backward_t(const Tensor& x, const Tensor& dy, const T* keep, Tensor* dx) {
    const T* xp = x.data<T>();
    const T* dyp = dy.data<T>();
    // sum dy and sum dy (x - mean); the latter times inv_std is sum dy * xhat.
    T* shift = coef_.data<T>();
    for (std::int64_t c = 0; c < c_; ++c)
      shift[c] = static_cast<T>(mean_[static_cast<std::size_t>(c)]);
    channel_sums<T>(x.dim(0), dyp, xp, shift, keep);
    for (std::int64_t c = 0; c < c_; ++c) {
      local_[static_cast<std::size_t>(c_ + c)] *= inv_std_[static_cast<std::size_t>(c)];
      total_[static_cast<std::size_t>(c_ + c)] *= inv_std_[static_cast<std::size_t>(c)];
    }
    // The parameters' gradients are this rank's own (the gradient exchange adds the ranks').
    T* dgamma = gamma_.grad.data<T>();
    T* dbeta = beta_.grad.data<T>();
    for (std::int64_t c = 0; c < c_; ++c) {
      dbeta[c] += static_cast<T>(local_[static_cast<std::size_t>(c)]);
      dgamma[c] += static_cast<T>(local_[static_cast<std::size_t>(c_ + c)]);
    }
    if (!dx) return;
    // dx = a * dy + b * x + d, with a = gamma*inv_std, b = -a*inv_std*sum(dy*xhat)/M and
    // d = -a*sum(dy)/M - b*mean (sums over the statistics' whole batch).
    const T* gamma = gamma_.value.data<T>();
    const double m = total_[static_cast<std::size_t>(2 * c_)];
    T* a = coef_.data<T>();
    for (std::int64_t c = 0; c < c_; ++c) {
      const auto k = static_cast<std::size_t>(c);
      const double ad = gamma[c] * inv_std_[k];
      const double bd = -ad * inv_std_[k] * total_[k + static_cast<std::size_t>(c_)] / m;
      a[c] = static_cast<T>(ad);
      a[c_ + c] = static_cast<T>(bd);
      a[2 * c_ + c] = static_cast<T>(-ad * total_[k] / m - bd * mean_[k]);
    }
    combine<T>(x.dim(0), dyp, xp, dx->data<T>(), keep);
  }

  std::int64_t inner_ = 1, rows_per_sample_ = 1;
  std::int64_t pattern_ = 0;  // NHWC: the channels' pattern P (channel_pattern.hpp), or 0
  Communicator* communicator_ = nullptr;
  int threads_ = 1;
  std::vector<double> partial_;         // [thread][2C] partial sums
  std::vector<double> local_, total_;   // [2C + 1] this rank's sums, every rank's sums
  std::vector<double> mean_, inv_std_;  // [C] the statistics of the last forward
  Tensor coef_;      // [3C] per-channel coefficients of combine(), or channel_sums' shift
  Tensor run_sums_;  // [thread][2C] channel_sums' sums of a run of rows
};

Plugin* create(const Params& p, const PluginContext&) { return new BatchNorm(p); }

}  // namespace

// The run it takes into itself (dtnn/model.hpp, fuse_layers); the settings its conformance checks
// run at (dtnn/testing/plugin_conformance.hpp).
constexpr const char* kTraits = R"({
  "fuses": [{"option": "batchnorm_relu", "absorbs": ["relu"], "into": ["activation"]}],
  "conformance": [
    {"params": {"gamma": 1.5, "beta": 0.25}, "input": [3, 2, 4], "batch": 3},
    {"params": {}, "input": [5], "batch": 4},
    {"params": {"activation": "relu"}, "input": [3, 2, 4], "batch": 3}]})";

DTNN_EXPORT_PLUGIN(.kind = "layer", .name = "batchnorm",
                   .description = "batch normalisation per channel, with running statistics",
                   .parameters = dtnn::layer_parameters::kBatchnormParameters, .traits = kTraits,
                   .factory = create)
