// nll: negative log-likelihood of log-probabilities (a model ending in log_softmax), classes
// weighted, class-id targets (a sequence's tokens) or one-hot ones: log_likelihood.hpp has the
// formulas. The targets are ids when there is one per row. The rule runs on the host here and on
// a GPU in the twin beside it (cuda_nll.cu).
#pragma once
#include "class_weights.hpp"
#include "dtnn/row_rule_loss.hpp"
#include "log_likelihood.hpp"

namespace dtnn::losses {

// The row's log-likelihood of y itself.
struct NllRule : rules::LossRuleBase, LogLikelihood {
  static constexpr bool kClassIds = true;
  using LogLikelihood::gradient;
  using LogLikelihood::weight;
  template <class T>
  DTNN_HOST_DEVICE double loss(const rules::LossRow<T>& row) const {
    return LogLikelihood::loss(row, 0.0);
  }
};

class Nll : public RowRuleLoss<NllRule> {
 public:
  static constexpr const char* kDescription =
      "negative log-likelihood of log-probabilities (after log_softmax); class-id targets may be "
      "ignored (padding), classes weighted";
  static constexpr const char* kParameters = R"({"ignore_index": -1, "weights": []})";
  // Conformance: one-hot targets, and class ids with one row ignored; each with class weights too.
  static constexpr const char* kTraits =
      R"({"aliases": ["negative_log_likelihood", "negative_likelihood"],
      "conformance": [{}, {"labels": "ids"}, {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}},
      {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}, "labels": "ids"}]})";
  explicit Nll(const Params& p)
      : RowRuleLoss(NllRule{{}, {double(p.get_int("ignore_index"))}}, read_class_weights(p)) {}
  std::string name() const override { return "nll"; }
};

}  // namespace dtnn::losses
