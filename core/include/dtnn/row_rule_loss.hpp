// A loss written as a loss rule (dtnn/loss_rule.hpp): the plugin gives its rule (and its class
// weights, if it takes them), and this header runs the rule on the host. Its CUDA twin
// (plugins/cuda/common/device_loss.cuh) inherits the same class and runs the same rule in
// kernels, a thread per row, so the two agree on everything but the arithmetic's order.
//
//   struct MseRule : rules::LossRuleBase { ... };           // in the plugin's header
//   class Mse : public RowRuleLoss<MseRule> { ... };        // name(), description, parameters
#pragma once
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/dataset.hpp"
#include "dtnn/loss.hpp"
#include "dtnn/loss_rule.hpp"
#include "dtnn/parallel.hpp"

namespace dtnn {

// How a batch of predictions y splits into a rule's rows: `rows` rows of m values, the targets
// one class id per row (ids) or shaped as y.
struct LossRows {
  std::int64_t rows = 0, m = 0;
  bool ids = false;

  template <class T>
  DTNN_HOST_DEVICE rules::LossRow<T> row(const T* y, const T* t, std::int64_t r,
                                         const double* w) const {
    return {y + r * m, t + (ids ? r : r * m), m, ids, w};
  }
};

// y and t split for a rule with these flags; an Error naming `who` when the targets fit neither
// form, or when there are class weights (a count other than 0) but not one per class.
DTNN_CORE_EXPORT LossRows loss_rows(const Tensor& y, const Tensor& t, std::string_view who,
                                    bool per_sample, bool class_ids, std::size_t weights);
// The error of targets t that are not all class ids: the row and the value, as ClassTargets says
// it (t is read on the host, wherever it is).
[[noreturn]] DTNN_CORE_EXPORT void throw_bad_class_id(const Tensor& y, const Tensor& t,
                                                      std::string_view who, double ignored);

template <class Rule>
LossRows loss_rows_of(const Tensor& y, const Tensor& t, std::string_view who,
                      std::span<const double> weights) {
  return loss_rows(y, t, who, Rule::kPerSample, Rule::kClassIds, weights.size());
}

// The id a rule's targets leave out (its `ignored`, when it takes class ids).
template <class Rule>
double ignored_id(const Rule& rule) {
  if constexpr (Rule::kClassIds)
    return rule.ignored;
  else
    return kIgnoredLabel;
}

// The loss's denominator, sum_r weight(r) in row order (w: the class weights or null); the
// error of a bad class id among the targets.
template <class T, class Rule>
double total_weight(const Rule& rule, const LossRows& s, const Tensor& y, const Tensor& t,
                    const double* w, std::string_view who) {
  const T *yp = y.data<T>(), *tp = t.data<T>();
  double total = 0;
  bool bad = false;
  for (std::int64_t r = 0; r < s.rows; ++r) total += rule.weight(s.row(yp, tp, r, w), &bad);
  if (bad) throw_bad_class_id(y, t, who, ignored_id(rule));
  return total;
}

// The host executor. The loss, sum_r loss(r) / sum_r weight(r), summed in row order.
template <class Rule>
double row_rule_loss(const Rule& rule, const Tensor& y, const Tensor& t,
                     std::span<const double> weights, std::string_view who) {
  const LossRows s = loss_rows_of<Rule>(y, t, who, weights);
  const double* w = weights.empty() ? nullptr : weights.data();
  return dispatch_dtype(y.dtype(), [&](auto z) {
    using T = decltype(z);
    const double total = total_weight<T>(rule, s, y, t, w, who);
    const T *yp = y.data<T>(), *tp = t.data<T>();
    double sum = 0;
    for (std::int64_t r = 0; r < s.rows; ++r) sum += rule.loss(s.row(yp, tp, r, w));
    return total > 0 ? sum / total : 0.0;
  });
}

// d = dL/dy (through_softmax: dL/dlogits for y a softmax's probabilities), written whole, rows
// in parallel.
template <bool through_softmax, class Rule>
void row_rule_gradient(const Rule& rule, const Tensor& y, const Tensor& t,
                       std::span<const double> weights, std::string_view who, Tensor& d) {
  const LossRows s = loss_rows_of<Rule>(y, t, who, weights);
  const double* w = weights.empty() ? nullptr : weights.data();
  dispatch_dtype(y.dtype(), [&](auto z) {
    using T = decltype(z);
    const double total = total_weight<T>(rule, s, y, t, w, who);
    const T *yp = y.data<T>(), *tp = t.data<T>();
    const T scale = total > 0 ? T(1.0 / total) : T(0);
    T* dp = d.data<T>();
    const std::int64_t grain =
        std::max<std::int64_t>(2, kParallelGrain / std::max<std::int64_t>(s.m, 1));
    parallel_for(s.rows, grain, [&](std::int64_t r) {
      const rules::LossRow<T> row = s.row(yp, tp, r, w);
      if constexpr (through_softmax)
        rule.softmax_gradient(row, scale, dp + r * s.m);
      else
        rule.gradient(row, scale, dp + r * s.m);
    });
  });
}

template <class R>
class RowRuleLoss : public Loss {
 public:
  using Rule = R;
  const Rule& rule() const { return rule_; }
  // One weight per class (empty: none), for the twin to upload.
  const std::vector<double>& class_weights() const { return weights_; }

  double forward(const Tensor& y, const Tensor& t) override {
    return row_rule_loss(rule_, y, t, weights_, who());
  }
  void backward(const Tensor& y, const Tensor& t, Tensor& dy) override {
    row_rule_gradient<false>(rule_, y, t, weights_, who(), dy);
  }
  bool has_softmax_gradient() const override { return Rule::kSoftmaxGradient; }
  void backward_through_softmax(const Tensor& p, const Tensor& t, Tensor& dlogits) override {
    if constexpr (Rule::kSoftmaxGradient)
      row_rule_gradient<true>(rule_, p, t, weights_, who(), dlogits);
    else
      Loss::backward_through_softmax(p, t, dlogits);
  }

 protected:
  explicit RowRuleLoss(Rule rule, std::vector<double> weights = {})
      : rule_(rule), weights_(std::move(weights)) {}
  // name(), made once (a training step allocates nothing).
  const std::string& who() const {
    if (who_.empty()) who_ = name();
    return who_;
  }

 private:
  Rule rule_;
  std::vector<double> weights_;
  mutable std::string who_;
};

}  // namespace dtnn
