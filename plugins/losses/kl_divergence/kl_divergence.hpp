// kl_divergence: KL(q || p) of a target distribution q from the model's, whose
// log-probabilities y come in (a model ending in log_softmax), rows r of C classes:
//   L = (1/m) sum_r sum_j q[r, j] (log q[r, j] - y[r, j]),   dL/dy[r, j] = -q[r, j] / m
// over the m rows that have a target (PyTorch's KLDivLoss with reduction "batchmean").
// q is the target smoothed by label_smoothing e (Szegedy et al. 2016; the Transformer's 0.1):
// q = (1 - e) t + e / C, t one-hot from a class id (the ignored id: no target) or the given
// one-hot or soft row. The rule runs on the host here and on a GPU in the twin beside it
// (cuda_kl_divergence.cu).
#pragma once
#include <cmath>

#include "dtnn/row_rule_loss.hpp"

namespace dtnn::losses {

// A row with a target: sum_j q_j (log q_j - y_j), weighing 1; an ignored row weighs 0.
struct KlDivergenceRule : rules::LossRuleBase {
  static constexpr bool kClassIds = true;
  double smoothing, ignored;

  template <class T>
  DTNN_HOST_DEVICE double weight(const rules::LossRow<T>& row, bool* bad) const {
    return !row.ids || rules::class_id(row, ignored, bad) >= 0 ? 1.0 : 0.0;
  }
  template <class T>
  DTNN_HOST_DEVICE double loss(const rules::LossRow<T>& row) const {
    const std::int64_t id = target(row);
    if (row.ids && id < 0) return 0.0;
    double sum = 0;
    for (std::int64_t j = 0; j < row.m; ++j)
      if (const double q = smoothed(row, id, j); q > 0) sum += q * (std::log(q) - double(row.y[j]));
    return sum;
  }
  template <class T>
  DTNN_HOST_DEVICE void gradient(const rules::LossRow<T>& row, T scale, T* d) const {
    const std::int64_t id = target(row);
    for (std::int64_t j = 0; j < row.m; ++j)
      d[j] = row.ids && id < 0 ? T(0) : T(-smoothed(row, id, j)) * scale;
  }

 private:
  template <class T>
  DTNN_HOST_DEVICE std::int64_t target(const rules::LossRow<T>& row) const {
    bool bad = false;
    return row.ids ? rules::class_id(row, ignored, &bad) : -1;
  }
  // q_j, for class id `id` (ids) or the row's target values.
  template <class T>
  DTNN_HOST_DEVICE double smoothed(const rules::LossRow<T>& row, std::int64_t id,
                                   std::int64_t j) const {
    const double t = row.ids ? (j == id ? 1.0 : 0.0) : double(row.t[j]);
    return (1 - smoothing) * t + smoothing / double(row.m);
  }
};

class KlDivergence : public RowRuleLoss<KlDivergenceRule> {
 public:
  static constexpr const char* kDescription =
      "KL divergence of the (smoothed) targets from the predicted distribution, "
      "log-probabilities in";
  static constexpr const char* kParameters = R"({"label_smoothing": 0.0, "ignore_index": -1})";
  static constexpr const char* kTraits =
      R"({"conformance": [{}, {"params": {"label_smoothing": 0.1}},
      {"labels": "ids", "params": {"label_smoothing": 0.1}}]})";
  explicit KlDivergence(const Params& p)
      : RowRuleLoss(KlDivergenceRule{
            {}, p.get_double("label_smoothing"), double(p.get_int("ignore_index"))}) {
    if (!(rule().smoothing >= 0 && rule().smoothing < 1))
      p.fail("label_smoothing", "a number in [0, 1)");
  }
  std::string name() const override { return "kl_divergence"; }
};

}  // namespace dtnn::losses
