// binary_cross_entropy over probabilities p (a sigmoid's outputs) and targets t in [0, 1], as the
// mean over all N outputs of the batch (PyTorch's BCELoss, Keras's binary_crossentropy), column j
// (class j of a multi-label target) weighted by w_j (class_weights.hpp; all 1 without "weights",
// PyTorch's weight= broadcast over the rows):
//   L = -(1/N) sum_i w_j(i) [t_i log p_i + (1 - t_i) log(1 - p_i)]
//   dL/dp_i = w_j(i) (p_i - t_i) / (N p_i (1 - p_i))
// p is clipped to [eps, 1 - eps] (probability_floor.hpp) so that neither the loss nor the
// gradient is infinite.
#include <algorithm>
#include <cmath>

#include "class_weights.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"
#include "probability_floor.hpp"

namespace {

using namespace dtnn;

class BinaryCrossEntropy final : public Loss {
 public:
  explicit BinaryCrossEntropy(const Params& p) : weights_(p, "binary_cross_entropy"), floor_(p) {}
  std::string name() const override { return "binary_cross_entropy"; }

  double forward(const Tensor& p, const Tensor& t) override {
    return dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const T eps = floor_.get<T>();
      const std::int64_t m = columns(p);
      double sum = 0;
      for (std::int64_t i = 0; i < p.numel(); ++i) {
        const double pi = std::clamp(pp[i], eps, T(1) - eps), ti = tp[i];
        sum -= weights_.at(i % m) * (ti * std::log(pi) + (1.0 - ti) * std::log(1.0 - pi));
      }
      return sum / static_cast<double>(p.numel());
    });
  }

  void backward(const Tensor& p, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(p.dtype(), [&](auto z) {
      using T = decltype(z);
      const T *pp = p.data<T>(), *tp = t.data<T>();
      const T eps = floor_.get<T>(), inv_n = T(1) / T(p.numel());
      const std::int64_t m = columns(p);
      T* d = dy.data<T>();
      for (std::int64_t i = 0; i < p.numel(); ++i) {
        const T pi = std::clamp(pp[i], eps, T(1) - eps);
        d[i] = T(weights_.at(i % m)) * (pi - tp[i]) * inv_n / (pi * (T(1) - pi));
      }
    });
  }

 private:
  // The classes (the last axis), checked against the weights.
  std::int64_t columns(const Tensor& p) const {
    const std::int64_t m = p.shape()[p.shape().rank() - 1];
    weights_.check(m);
    return m;
  }

  losses::ClassWeights weights_;
  losses::ProbabilityFloor floor_;
};

Plugin* create(const Params& p, const PluginContext&) { return new BinaryCrossEntropy(p); }

}  // namespace

// Conformance: unweighted, with class weights, with PyDTNN's --loss-eps.
constexpr const char* kTraits = R"({"conformance": [
    {}, {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}}, {"params": {"eps": 1e-8}}]})";

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "binary_cross_entropy",
                   .description =
                       "mean binary cross-entropy of probabilities (sigmoid outputs) against 0/1 "
                       "targets, classes (columns) optionally weighted",
                   .parameters = R"({"weights": [], "eps": 0.0})", .traits = kTraits,
                   .factory = create)
