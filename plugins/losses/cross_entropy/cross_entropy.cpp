// cross_entropy: PyDTNN 3.x's and PyTorch's CrossEntropyLoss, the loss of a model that ends in
// raw scores (logits, no softmax layer): the log-likelihood (log_likelihood.hpp: class ids or
// one-hot rows, classes weighted, the weighted mean) of log_softmax(x), rows of C logits,
//   log p_rj = x_rj - lse_r,  lse_r = m_r + log sum_k exp(x_rk - m_r),  m_r = max_k x_rk
// so no probability is ever rounded to 0 and no epsilon is needed. With g = dL/d(log p) from the
// log-likelihood, the gradient through log_softmax is
//   dL/dx_rj = g_rj - p_rj sum_k g_rk.
#include <algorithm>
#include <cmath>
#include <vector>

#include "dtnn/class_targets.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"
#include "log_likelihood.hpp"
#include "loss_parameters.hpp"

namespace {

using namespace dtnn;

class CrossEntropy final : public Loss {
 public:
  explicit CrossEntropy(const Params& p)
      : ignore_(double(p.get_int("ignore_index"))), weights_(p, "cross_entropy") {}
  std::string name() const override { return "cross_entropy"; }

  double forward(const Tensor& x, const Tensor& t) override {
    return dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const ClassTargets targets(x, t, "cross_entropy", ignore_);
      const std::vector<T> logp = log_softmax<T>(x, targets.classes());
      return losses::log_likelihood_loss(logp.data(), t.data<T>(), targets, weights_);
    });
  }

  void backward(const Tensor& x, const Tensor& t, Tensor& dx) override {
    dispatch_dtype(x.dtype(), [&](auto z) {
      using T = decltype(z);
      const ClassTargets targets(x, t, "cross_entropy", ignore_);
      const std::int64_t m = targets.classes();
      const std::vector<T> logp = log_softmax<T>(x, m);
      T* d = dx.data<T>();
      losses::log_likelihood_gradient(t.data<T>(), d, targets, weights_);
      for (std::int64_t r = 0; r < targets.rows(); ++r) {
        T* g = d + r * m;
        const T* lp = logp.data() + r * m;
        T total = 0;
        for (std::int64_t j = 0; j < m; ++j) total += g[j];
        for (std::int64_t j = 0; j < m; ++j) g[j] -= std::exp(lp[j]) * total;
      }
    });
  }

 private:
  template <class T>
  static std::vector<T> log_softmax(const Tensor& x, std::int64_t m) {
    const T* xp = x.data<T>();
    std::vector<T> out(static_cast<std::size_t>(x.numel()));
    for (std::int64_t r = 0; r < x.numel() / m; ++r) {
      const T* row = xp + r * m;
      const T top = *std::max_element(row, row + m);
      double sum = 0;
      for (std::int64_t j = 0; j < m; ++j) sum += std::exp(double(row[j] - top));
      const T lse = top + T(std::log(sum));
      for (std::int64_t j = 0; j < m; ++j) out[r * m + j] = row[j] - lse;
    }
    return out;
  }

  double ignore_;
  losses::ClassWeights weights_;
};

Plugin* create(const Params& p, const PluginContext&) { return new CrossEntropy(p); }

}  // namespace

// Conformance: one-hot targets, and class ids with one row ignored; each with class weights too.
constexpr const char* kTraits = R"({"conformance": [{}, {"labels": "ids"},
    {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}},
    {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}, "labels": "ids"}]})";

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "cross_entropy",
                   .description =
                       "cross-entropy of logits (softmax taken inside, as PyTorch's "
                       "CrossEntropyLoss); class ids or one-hot targets, classes weighted",
                   .parameters = dtnn::loss_parameters::kLogLikelihoodParameters, .traits = kTraits,
                   .factory = create)
