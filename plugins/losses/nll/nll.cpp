// nll: negative log-likelihood of log-probabilities (a model ending in log_softmax), classes
// weighted, class-id targets (a sequence's tokens) or one-hot ones: log_likelihood.hpp has the
// formulas. The targets are ids when there are fewer of them than predictions.
#include "dtnn/class_targets.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/plugin_api.hpp"
#include "log_likelihood.hpp"
#include "loss_parameters.hpp"

namespace {

using namespace dtnn;

class NegativeLogLikelihood final : public Loss {
 public:
  explicit NegativeLogLikelihood(const Params& p)
      : ignore_(double(p.get_int("ignore_index"))), weights_(p, "nll") {}
  std::string name() const override { return "nll"; }

  double forward(const Tensor& y, const Tensor& t) override {
    return dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const ClassTargets targets(y, t, "nll", ignore_);
      return losses::log_likelihood_loss(y.data<T>(), t.data<T>(), targets, weights_);
    });
  }

  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const ClassTargets targets(y, t, "nll", ignore_);
      losses::log_likelihood_gradient(t.data<T>(), dy.data<T>(), targets, weights_);
    });
  }

 private:
  double ignore_;
  losses::ClassWeights weights_;
};

Plugin* create(const Params& p, const PluginContext&) { return new NegativeLogLikelihood(p); }

}  // namespace

// Conformance: one-hot targets, and class ids with one row ignored; each with class weights too.
constexpr const char* kTraits = R"({"aliases": ["negative_log_likelihood", "negative_likelihood"],
    "conformance": [{}, {"labels": "ids"},
    {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}},
    {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}, "labels": "ids"}]})";

DTNN_EXPORT_PLUGIN(.kind = "loss", .name = "nll",
                   .description =
                       "negative log-likelihood of log-probabilities (after "
                       "log_softmax); class-id targets may be ignored (padding), classes weighted",
                   .parameters = dtnn::loss_parameters::kLogLikelihoodParameters, .traits = kTraits,
                   .factory = create)
