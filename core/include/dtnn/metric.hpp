// Metric: accumulated over batches as additive totals, so that ranks can sum their totals and
// every rank computes the same global value.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/metric_rules.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Metric : public Plugin {
 public:
  ~Metric() override;
  virtual std::string name() const = 0;        // "categorical_accuracy"
  virtual std::size_t num_totals() const = 0;  // length of the totals vector
  // Adds this batch's contribution to totals (y_pred, y_true: [n, classes]). Must not allocate.
  virtual void accumulate(const Tensor& y_pred, const Tensor& y_true,
                          std::span<double> totals) const = 0;
  virtual double value(std::span<const double> totals) const = 0;
  // Told the dataset's class count before num_totals() is asked (metrics sized by it).
  virtual void set_classes(std::int64_t classes) { (void)classes; }
  // Where the tensors accumulate() reads live: the host, or the model's device for a device
  // plugin ("cuda_<name>"), which reads the predictions there instead of a copy on the host.
  virtual Device device() const { return Device::cpu; }
  // A metric that is a matrix (a confusion matrix) gives its rows here, value() being its
  // summary; the history records both. Empty for the others.
  virtual std::vector<std::vector<double>> matrix(std::span<const double> totals) const {
    (void)totals;
    return {};
  }
};

// The host executor of a metric rule (dtnn/metric_rules.hpp): every row of (y_pred, y_true),
// [n, m] of float or double, through rule, its contributions added to totals.
DTNN_CORE_EXPORT void accumulate_rows(const Tensor& y_pred, const Tensor& y_true,
                                      const rules::MetricRule& rule, std::span<double> totals);
// Both executors' check before a batch: an Error when rows of m values would add to more totals
// than the metric keeps (a confusion matrix told other classes than the predictions have), so
// that a refused batch leaves the totals as they were.
DTNN_CORE_EXPORT void check_rows_fit(const rules::MetricRule& rule, std::int64_t m,
                                     std::size_t totals);
// Adds rule contributions in slots (kMaxContributions per row, the unused with index -1) to
// totals: the fold of both executors, after check_rows_fit.
DTNN_CORE_EXPORT void add_contributions(std::span<const rules::Contribution> slots,
                                        std::span<double> totals);

// A metric whose totals are sums over rows of a rule's contributions: accumulate() runs the rule
// on the host; the metric's CUDA twin (plugins/cuda/common/device_metric.hpp) inherits the rest
// and runs the same rule where the predictions are.
class RowRuleMetric : public Metric {
 public:
  const rules::MetricRule& rule() const { return rule_; }
  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    accumulate_rows(y_pred, y_true, rule_, totals);
  }

 protected:
  explicit RowRuleMetric(rules::MetricRule rule) : rule_(rule) {}

 private:
  rules::MetricRule rule_;
};

// totals[0] / totals[1], or 0 before any row.
inline double row_mean(std::span<const double> totals) {
  return totals[1] > 0 ? totals[0] / totals[1] : 0.0;
}

// A mean over rows of one value per row. Totals: {sum over rows, rows}.
class RowMeanMetric : public RowRuleMetric {
 public:
  std::size_t num_totals() const override { return 2; }
  double value(std::span<const double> totals) const override { return row_mean(totals); }

 protected:
  explicit RowMeanMetric(rules::RowMetric kind) : RowRuleMetric({kind}) {}
};

// A metric of the binary decision "class positive_class" (precision, recall, f1_score, the binary
// confusion matrix): reads and checks the parameter; its rule sums the decision's counts (TP, FP,
// FN) into totals[0], [1], [2] (binary_confusion adds the rows in totals[3]).
class BinaryDecisionMetric : public RowRuleMetric {
 public:
  std::size_t num_totals() const override { return 3; }

 protected:
  explicit BinaryDecisionMetric(const Params& p,
                                rules::RowMetric kind = rules::RowMetric::binary_counts)
      : RowRuleMetric({kind, positive_class(p)}) {}

 private:
  static std::int64_t positive_class(const Params& p) {
    const std::int64_t c = p.get_int("positive_class");
    if (c < 0) p.fail("positive_class", "a class index >= 0");
    return c;
  }
};

// The factory of a metric plugin whose class is made from its parameters.
template <class M>
Plugin* create_metric(const Params& p, const PluginContext&) {
  return new M(p);
}

}  // namespace dtnn
