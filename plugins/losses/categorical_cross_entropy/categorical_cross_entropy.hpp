// categorical_cross_entropy over probabilities p and one-hot (or soft) targets t, rows of n,
// classes weighted by w (class_weights.hpp; all 1 without "weights"):
//   L = -(1/N) sum_i sum_j w_j t_ij log(max(p_ij, eps)),  N = n unweighted, sum_ij w_j t_ij else
//   dL/dp_ij = -w_j t_ij / (N max(p_ij, eps))     (eps: probability_floor.hpp)
// Combined with a softmax in front (the usual case): dL/dlogit_ij = (p_ij s_i - w_j t_ij) / N with
// s_i = sum_k w_k t_ik ((p_ij - t_ij) / n unweighted), exact and stable however small p gets.
// The rule runs on the host here and on a GPU in the twin beside it
// (cuda_categorical_cross_entropy.cu).
#pragma once
#include <cmath>

#include "class_weights.hpp"
#include "dtnn/row_rule_loss.hpp"
#include "log_likelihood.hpp"
#include "probability_floor.hpp"

namespace dtnn::losses {

// A row weighs as the log-likelihood's one-hot rows do: 1, or sum_j w_j t_j weighted.
struct CategoricalCrossEntropyRule : rules::LossRuleBase {
  static constexpr bool kSoftmaxGradient = true;
  double eps;

  template <class T>
  DTNN_HOST_DEVICE double weight(const rules::LossRow<T>& row, bool* bad) const {
    return LogLikelihood{}.weight(row, bad);
  }
  template <class T>
  DTNN_HOST_DEVICE double loss(const rules::LossRow<T>& row) const {
    const T floor = rules::probability_floor<T>(eps);
    double sum = 0;
    for (std::int64_t j = 0; j < row.m; ++j)
      if (row.t[j] != T(0))
        sum -= row.weight_of(j) * double(row.t[j]) *
               std::log(double(row.y[j] > floor ? row.y[j] : floor));
    return sum;
  }
  template <class T>
  DTNN_HOST_DEVICE void gradient(const rules::LossRow<T>& row, T scale, T* d) const {
    const T floor = rules::probability_floor<T>(eps);
    for (std::int64_t j = 0; j < row.m; ++j)
      d[j] = -T(row.weight_of(j)) * row.t[j] * scale / (row.y[j] > floor ? row.y[j] : floor);
  }
  // row.y: the softmax's probabilities.
  template <class T>
  DTNN_HOST_DEVICE void softmax_gradient(const rules::LossRow<T>& row, T scale, T* d) const {
    if (!row.w) {
      for (std::int64_t j = 0; j < row.m; ++j) d[j] = (row.y[j] - row.t[j]) * scale;
      return;
    }
    T s = 0;
    for (std::int64_t j = 0; j < row.m; ++j) s += T(row.w[j]) * row.t[j];
    for (std::int64_t j = 0; j < row.m; ++j) d[j] = (row.y[j] * s - T(row.w[j]) * row.t[j]) * scale;
  }
};

class CategoricalCrossEntropy : public RowRuleLoss<CategoricalCrossEntropyRule> {
 public:
  static constexpr const char* kDescription =
      "cross-entropy of probabilities against one-hot targets, classes optionally weighted; "
      "exact gradient through softmax";
  static constexpr const char* kParameters = R"({"weights": [], "eps": 0.0})";
  // Conformance: unweighted, with class weights, with PyDTNN's --loss-eps.
  static constexpr const char* kTraits = R"({"default": true, "conformance": [
      {}, {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}}, {"params": {"eps": 1e-8}}]})";
  explicit CategoricalCrossEntropy(const Params& p)
      : RowRuleLoss(CategoricalCrossEntropyRule{{}, probability_floor(p)}, read_class_weights(p)) {}
  std::string name() const override { return "categorical_cross_entropy"; }
};

}  // namespace dtnn::losses
