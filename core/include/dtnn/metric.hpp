// Metric: accumulated over batches as additive totals, so that ranks can sum their totals and
// every rank computes the same global value.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
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

// For metrics that are a mean over rows: adds f(p_row, t_row, m) for each of the n rows of
// (y_pred, y_true) to totals[0] and n to totals[1]. f is called with float or double pointers.
template <class RowValue>
void accumulate_row_mean(const Tensor& y_pred, const Tensor& y_true, std::span<double> totals,
                         RowValue f) {
  dispatch_dtype(y_pred.dtype(), [&](auto z) {
    using T = decltype(z);
    const std::int64_t n = y_pred.dim(0), m = y_pred.numel() / (n > 0 ? n : 1);
    const T *p = y_pred.data<T>(), *t = y_true.data<T>();
    double sum = 0;
    for (std::int64_t r = 0; r < n; ++r) sum += f(p + r * m, t + r * m, m);
    totals[0] += sum;
    totals[1] += static_cast<double>(n);
  });
}

// Counts of a binary decision for class `positive`: a row is predicted positive when its argmax is
// `positive` (with a single output: when it is >= 0.5), and is positive when its target's is.
// Adds true positives, false positives and false negatives to totals[0], [1], [2].
DTNN_CORE_EXPORT void accumulate_binary_counts(const Tensor& y_pred, const Tensor& y_true,
                                               std::int64_t positive, std::span<double> totals);

// A metric of the binary decision "class positive_class" (precision, recall, f1_score, the binary
// confusion matrix): reads and checks the parameter, and sums the decision's counts (TP, FP, FN)
// into totals[0], [1], [2]; a metric that needs more totals extends both.
class BinaryDecisionMetric : public Metric {
 public:
  explicit BinaryDecisionMetric(const Params& p) : positive_(p.get_int("positive_class")) {
    if (positive_ < 0) p.fail("positive_class", "a class index >= 0");
  }
  std::size_t num_totals() const override { return 3; }
  void accumulate(const Tensor& y_pred, const Tensor& y_true,
                  std::span<double> totals) const override {
    accumulate_binary_counts(y_pred, y_true, positive_, totals.subspan(0, 3));
  }

 private:
  std::int64_t positive_;
};

// totals[0] / totals[1], or 0 before any row.
inline double row_mean(std::span<const double> totals) {
  return totals[1] > 0 ? totals[0] / totals[1] : 0.0;
}

}  // namespace dtnn
