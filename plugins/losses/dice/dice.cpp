// dice: the soft Dice loss of segmentation (a U-Net's), per sample over all its outputs p (a
// sigmoid's, one per pixel) against the mask t, averaged over the n samples of the batch:
//   D_s = (2 sum_i p_i t_i + smooth) / (sum_i p_i + sum_i t_i + smooth),   L = 1 - mean_s D_s
//   dL/dp_i = -(1/n) (2 t_i S_s - (2 I_s + smooth)) / S_s^2
// with I_s = sum_i p_i t_i and S_s = sum_i p_i + sum_i t_i + smooth. smooth (1 by default, as
// Keras' U-Net recipes take it) keeps an empty mask predicted empty at D = 1.
#include <cmath>

#include "dtnn/error.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/parallel.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin_api.hpp"
#include "loss_parameters.hpp"

namespace {

using namespace dtnn;

class Dice final : public Loss {
 public:
  explicit Dice(const Params& p) : smooth_(p.get_double("smooth")) {
    if (!(smooth_ >= 0) || !std::isfinite(smooth_)) p.fail("smooth", "a number >= 0");
  }
  std::string name() const override { return "dice"; }

  double forward(const Tensor& y, const Tensor& t) override {
    return dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t n = y.dim(0), m = y.numel() / n;
      double total = 0;
      for (std::int64_t s = 0; s < n; ++s) {
        const auto [overlap, sum] = sums<T>(y, t, s, m);
        total += sum > 0 ? (2 * overlap + smooth_) / sum : 1.0;
      }
      return 1.0 - total / static_cast<double>(n);
    });
  }

  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t n = y.dim(0), m = y.numel() / n;
      const T* tp = t.data<T>();
      T* d = dy.data<T>();
      parallel_for(n, 1, [&](std::int64_t s) {
        const auto [overlap, sum] = sums<T>(y, t, s, m);
        const double num = 2 * overlap + smooth_;
        const double scale = sum > 0 ? -1.0 / (static_cast<double>(n) * sum * sum) : 0.0;
        for (std::int64_t i = s * m; i < (s + 1) * m; ++i)
          d[i] = static_cast<T>(scale * (2 * double(tp[i]) * sum - num));
      });
    });
  }

 private:
  // Sample s's sum of p t and its sum of p + t + smooth.
  template <class T>
  std::pair<double, double> sums(const Tensor& y, const Tensor& t, std::int64_t s,
                                 std::int64_t m) const {
    const T *yp = y.data<T>() + s * m, *tp = t.data<T>() + s * m;
    double overlap = 0, sum = smooth_;
    for (std::int64_t i = 0; i < m; ++i) {
      overlap += double(yp[i]) * double(tp[i]);
      sum += double(yp[i]) + double(tp[i]);
    }
    return {overlap, sum};
  }

  double smooth_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Dice(p); }

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "dice",
                   .description = "soft Dice loss of segmentation masks (1 - mean Dice per sample)",
                   .parameters = dtnn::loss_parameters::kDiceParameters,
                   .traits = R"({"aliases": ["dice_loss"]})", .factory = create)
