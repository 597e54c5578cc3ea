// kl_divergence_metric: PyDTNN 3.x's KL-divergence metric of predicted distributions p against
// target distributions t, its formula kept so that its figures compare:
//   mean over rows of  sum_j | p_j log | p_j / (t_j + eps) + eps | |      (eps: "eps", 1e-8)
// For soft targets close to the predictions it tracks KL(p || t); unlike the kl_divergence loss
// it reads probabilities (a softmax's outputs), and the absolute values keep each term >= 0.
// Totals: {sum over rows, rows}.
#include <cmath>

#include "dtnn/plugin_api.hpp"
#include "dtnn/row_rule_metric.hpp"

namespace {

using namespace dtnn;

struct KlDivergenceRule : rules::MeanRule {
  double eps = 1e-8;
  template <class T>
  int row(const T* p, const T* t, std::int64_t m, rules::Contribution* out) const {
    double sum = 0;
    for (std::int64_t j = 0; j < m; ++j) {
      const double pj = double(p[j]);
      sum += std::abs(pj * std::log(std::abs(pj / (double(t[j]) + eps) + eps)));
    }
    return rules::mean_term(sum, out);
  }
};

class KlDivergenceMetric final : public RowMeanMetric<KlDivergenceRule> {
 public:
  explicit KlDivergenceMetric(const Params& p) : RowMeanMetric(rule_of(p)) {}
  std::string name() const override { return "kl_divergence_metric"; }

 private:
  static KlDivergenceRule rule_of(const Params& p) {
    KlDivergenceRule rule;
    rule.eps = p.get_double("eps");
    if (!(rule.eps > 0 && rule.eps < 1)) p.fail("eps", "a number in (0, 1)");
    return rule;
  }
};

}  // namespace

DTNN_EXPORT_PLUGIN(.kind = "metric", .name = "kl_divergence_metric",
                   .description =
                       "PyDTNN 3.x's KL divergence of the predicted distribution from "
                       "the target's, mean over rows of sum |p log|p / (t + eps) + eps||",
                   .parameters = R"({"eps": 1e-8})", .traits = R"({"better": "min"})",
                   .factory = dtnn::create_metric<KlDivergenceMetric>)
