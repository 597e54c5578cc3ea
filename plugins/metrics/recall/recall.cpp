// recall: true positives / actual positives, TP / (TP + FN), for the class positive_class (default
// 1: the second output; a model with one output is positive where that output is >= 0.5). The
// counts are summed over batches and ranks before dividing, so the value is exact, not a mean of
// means. Totals: {TP, FP, FN}.
#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class Recall final : public Metric {
 public:
  explicit Recall(const Params& p) : positive_(p.get_int("positive_class")) {
    if (positive_ < 0) p.fail("positive_class", "a class index >= 0");
  }
  std::string name() const override { return "recall"; }
  std::size_t num_totals() const override { return 3; }
  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    accumulate_binary_counts(y_pred, y_true, positive_, totals);
  }
  double value(std::span<const double> totals) const override {
    const double d = totals[0] + totals[2];
    return d > 0 ? totals[0] / d : 0.0;
  }

 private:
  std::int64_t positive_;
};

Plugin* create(const Params& p, const PluginContext&) { return new Recall(p); }

}  // namespace

DTNN_PLUGIN("metric", "recall", "TP / (TP + FN) for positive_class", R"({"positive_class": 1})",
            create)
