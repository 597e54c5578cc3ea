// perplexity: exp of the mean negative log-likelihood of the targets, over the positions that
// have one: exp(-(1/m) sum_r log p[r, t_r]). The predictions are log-probabilities (a model
// ending in log_softmax) or, with "inputs": "probabilities", probabilities (one ending in
// softmax). Totals: (sum of -log p, counted). Bits per token: log2(perplexity).
#include <algorithm>
#include <cmath>

#include "dtnn/class_targets.hpp"
#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class Perplexity final : public Metric {
 public:
  explicit Perplexity(const Params& p)
      : log_inputs_(p.get_string("inputs") == "log_probabilities") {
    if (!log_inputs_ && p.get_string("inputs") != "probabilities")
      p.fail("inputs", "\"log_probabilities\" or \"probabilities\"");
  }
  std::string name() const override { return "perplexity"; }
  std::size_t num_totals() const override { return 2; }

  void accumulate(const Tensor& y, const Tensor& t, std::span<double> totals) const override {
    dispatch_dtype(y.dtype(), [&](auto z) {
      using T = decltype(z);
      const ClassTargets targets(y, t, "perplexity");
      const T *yp = y.data<T>(), *tp = t.data<T>();
      for (std::int64_t r = 0; r < targets.rows(); ++r) {
        const std::int64_t target = targets.of(tp, r);
        if (target < 0) continue;
        const double v = double(yp[r * targets.classes() + target]);
        totals[0] -= log_inputs_ ? v : std::log(std::max(v, 1e-300));
        totals[1] += 1;
      }
    });
  }
  double value(std::span<const double> totals) const override {
    return totals[1] > 0 ? std::exp(totals[0] / totals[1]) : 0.0;
  }

 private:
  bool log_inputs_;
};

}  // namespace

constexpr const char* kTraits = R"({"better": "min", "conformance": [
    {"params": {"inputs": "probabilities"}}, {"labels": "ids"}]})";

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "perplexity",
                   .description =
                       "exp of the mean negative log-likelihood of the targets "
                       "(log-probabilities in, or probabilities)",
                   .parameters = R"({"inputs": "log_probabilities"})", .traits = kTraits,
                   .factory = dtnn::create_metric<Perplexity>)
