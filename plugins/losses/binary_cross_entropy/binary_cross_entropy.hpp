// binary_cross_entropy over probabilities p (a sigmoid's outputs) and targets t in [0, 1], as the
// mean over all N outputs of the batch (PyTorch's BCELoss, Keras's binary_crossentropy), column j
// (class j of a multi-label target) weighted by w_j (class_weights.hpp; all 1 without "weights",
// PyTorch's weight= broadcast over the rows):
//   L = -(1/N) sum_i w_j(i) [t_i log p_i + (1 - t_i) log(1 - p_i)]
//   dL/dp_i = w_j(i) (p_i - t_i) / (N p_i (1 - p_i))
// p is clipped to [eps, 1 - eps] (probability_floor.hpp) so that neither the loss nor the
// gradient is infinite. The rule runs on the host here and on a GPU in the twin beside it
// (cuda_binary_cross_entropy.cu).
#pragma once
#include <cmath>

#include "class_weights.hpp"
#include "dtnn/row_rule_loss.hpp"
#include "probability_floor.hpp"

namespace dtnn::losses {

// A row of m outputs (the last axis: the classes), weighing m.
struct BinaryCrossEntropyRule : rules::LossRuleBase {
  double eps;

  template <class T>
  DTNN_HOST_DEVICE double weight(const rules::LossRow<T>& row, bool*) const {
    return double(row.m);
  }
  template <class T>
  DTNN_HOST_DEVICE double loss(const rules::LossRow<T>& row) const {
    double sum = 0;
    for (std::int64_t j = 0; j < row.m; ++j) {
      const double p = clipped(row.y[j]), t = row.t[j];
      sum -= row.weight_of(j) * (t * std::log(p) + (1.0 - t) * std::log(1.0 - p));
    }
    return sum;
  }
  template <class T>
  DTNN_HOST_DEVICE void gradient(const rules::LossRow<T>& row, T scale, T* d) const {
    for (std::int64_t j = 0; j < row.m; ++j) {
      const T p = clipped(row.y[j]);
      d[j] = T(row.weight_of(j)) * (p - row.t[j]) * scale / (p * (T(1) - p));
    }
  }

 private:
  template <class T>
  DTNN_HOST_DEVICE T clipped(T p) const {
    const T floor = rules::probability_floor<T>(eps);
    return p < floor ? floor : (p > T(1) - floor ? T(1) - floor : p);
  }
};

class BinaryCrossEntropy : public RowRuleLoss<BinaryCrossEntropyRule> {
 public:
  static constexpr const char* kDescription =
      "mean binary cross-entropy of probabilities (sigmoid outputs) against 0/1 targets, classes "
      "(columns) optionally weighted";
  static constexpr const char* kParameters = R"({"weights": [], "eps": 0.0})";
  // Conformance: unweighted, with class weights, with PyDTNN's --loss-eps.
  static constexpr const char* kTraits = R"({"conformance": [
      {}, {"params": {"weights": [0.5, 2.0, 1.0, 1.5]}}, {"params": {"eps": 1e-8}}]})";
  explicit BinaryCrossEntropy(const Params& p)
      : RowRuleLoss(BinaryCrossEntropyRule{{}, probability_floor(p)}, read_class_weights(p)) {}
  std::string name() const override { return "binary_cross_entropy"; }
};

}  // namespace dtnn::losses
