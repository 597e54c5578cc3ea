// cross_entropy: PyDTNN 3.x's and PyTorch's CrossEntropyLoss, the loss of a model that ends in
// raw scores (logits, no softmax layer): the log-likelihood (log_likelihood.hpp: class ids or
// one-hot rows, classes weighted, the weighted mean) of log_softmax(x), rows of C logits,
//   log p_j = x_j - lse,  lse = m + log sum_k exp(x_k - m),  m = max_k x_k
// so no probability is ever rounded to 0 and no epsilon is needed. With g = d loss/d(log p) from
// the log-likelihood, the gradient through log_softmax is
//   d loss/dx_j = g_j - p_j sum_k g_k.
// The rule runs on the host here and on a GPU in the twin beside it (cuda_cross_entropy.cu).
#pragma once
#include <cmath>

#include "class_weights.hpp"
#include "dtnn/row_rule.hpp"
#include "dtnn/row_rule_loss.hpp"
#include "log_likelihood.hpp"

namespace dtnn::losses {

struct CrossEntropyRule : rules::LossRuleBase, LogLikelihood {
  static constexpr bool kClassIds = true;
  using LogLikelihood::weight;

  template <class T>
  DTNN_HOST_DEVICE double loss(const rules::LossRow<T>& row) const {
    return LogLikelihood::loss(row, log_sum_exp(row));
  }
  template <class T>
  DTNN_HOST_DEVICE void gradient(const rules::LossRow<T>& row, T scale, T* d) const {
    LogLikelihood::gradient(row, scale, d);
    const double lse = log_sum_exp(row);
    T total = 0;
    for (std::int64_t j = 0; j < row.m; ++j) total += d[j];
    for (std::int64_t j = 0; j < row.m; ++j) d[j] -= T(std::exp(double(row.y[j]) - lse)) * total;
  }

 private:
  template <class T>
  DTNN_HOST_DEVICE static double log_sum_exp(const rules::LossRow<T>& row) {
    const double top = double(row.y[rules::argmax(row.y, row.m)]);
    double sum = 0;
    for (std::int64_t j = 0; j < row.m; ++j) sum += std::exp(double(row.y[j]) - top);
    return top + std::log(sum);
  }
};

class CrossEntropy : public RowRuleLoss<CrossEntropyRule> {
 public:
  static constexpr const char* kDescription =
      "cross-entropy of logits (softmax taken inside, as PyTorch's CrossEntropyLoss); class ids "
      "or one-hot targets, classes weighted";
  static constexpr const char* kParameters = R"({"ignore_index": -1, "weights": []})";
  // Conformance: one-hot targets, and class ids with one row ignored; each with class weights too.
  static constexpr const char* kTraits = R"({"conformance": [{}, {"labels": "ids"},
      {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}},
      {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}, "labels": "ids"}]})";
  explicit CrossEntropy(const Params& p)
      : RowRuleLoss(CrossEntropyRule{{}, {double(p.get_int("ignore_index"))}},
                    read_class_weights(p)) {}
  std::string name() const override { return "cross_entropy"; }
};

}  // namespace dtnn::losses
