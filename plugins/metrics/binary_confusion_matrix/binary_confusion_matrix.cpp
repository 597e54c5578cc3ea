// binary_confusion_matrix: the 2x2 counts [[TN, FP], [FN, TP]] of the decision "class
// positive_class" (with one output: output >= 0.5), summed over batches and ranks; the history
// records the matrix, the value is the decision's accuracy (TP + TN) / all.
#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class BinaryConfusionMatrix final : public BinaryDecisionMetric {
 public:
  using BinaryDecisionMetric::BinaryDecisionMetric;
  std::string name() const override { return "binary_confusion_matrix"; }
  std::size_t num_totals() const override { return 4; }  // TP, FP, FN, rows

  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    BinaryDecisionMetric::accumulate(y_pred, y_true, totals);
    totals[3] += static_cast<double>(y_pred.dim(0));
  }
  double value(std::span<const double> t) const override {
    return t[3] > 0 ? (t[3] - t[1] - t[2]) / t[3] : 0.0;
  }
  std::vector<std::vector<double>> matrix(std::span<const double> t) const override {
    const double tn = t[3] - t[0] - t[1] - t[2];
    return {{tn, t[1]}, {t[2], t[0]}};
  }
};

Plugin* create(const Params& p, const PluginContext&) { return new BinaryConfusionMatrix(p); }

}  // namespace

DTNN_PLUGIN("metric", "binary_confusion_matrix",
            "[[TN, FP], [FN, TP]] for positive_class; value: the decision's accuracy",
            R"({"positive_class": 1})", create)
