// multiclass_confusion_matrix: counts[t][p] of rows whose target's argmax is class t and whose
// prediction's argmax is class p. The counts are totals, so batches and ranks add them (a matrix
// summed, not averaged); the history records the matrix, and the metric's value is its trace over
// its sum (the accuracy).
#include <algorithm>

#include "dtnn/metric.hpp"
#include "dtnn/plugin_api.hpp"

namespace {

using namespace dtnn;

class MulticlassConfusionMatrix final : public Metric {
 public:
  std::string name() const override { return "multiclass_confusion_matrix"; }
  void set_classes(std::int64_t classes) override { classes_ = classes; }
  std::size_t num_totals() const override { return static_cast<std::size_t>(classes_ * classes_); }

  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    dispatch_dtype(y_pred.dtype(), [&](auto z) {
      using T = decltype(z);
      const std::int64_t n = y_pred.dim(0), m = classes_;
      const T *p = y_pred.data<T>(), *t = y_true.data<T>();
      for (std::int64_t r = 0; r < n; ++r) {
        const auto predicted = std::max_element(p + r * m, p + (r + 1) * m) - (p + r * m);
        const auto actual = std::max_element(t + r * m, t + (r + 1) * m) - (t + r * m);
        totals[static_cast<std::size_t>(actual * m + predicted)] += 1;
      }
    });
  }

  double value(std::span<const double> totals) const override {
    double trace = 0, sum = 0;
    for (std::int64_t i = 0; i < classes_ * classes_; ++i) sum += totals[static_cast<std::size_t>(i)];
    for (std::int64_t c = 0; c < classes_; ++c) trace += totals[static_cast<std::size_t>(c * classes_ + c)];
    return sum > 0 ? trace / sum : 0.0;
  }

  std::vector<std::vector<double>> matrix(std::span<const double> totals) const override {
    std::vector<std::vector<double>> rows(static_cast<std::size_t>(classes_));
    for (std::int64_t t = 0; t < classes_; ++t)
      rows[static_cast<std::size_t>(t)].assign(totals.begin() + t * classes_,
                                               totals.begin() + (t + 1) * classes_);
    return rows;
  }

 private:
  std::int64_t classes_ = 2;
};

Plugin* create(const Params&, const PluginContext&) { return new MulticlassConfusionMatrix(); }

}  // namespace

DTNN_PLUGIN("metric", "multiclass_confusion_matrix",
            "counts of (target class, predicted class); value: their accuracy", "{}", create)
