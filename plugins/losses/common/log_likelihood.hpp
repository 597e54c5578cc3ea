// The weighted negative log-likelihood of a row's log-probabilities, shared by the rules of nll
// (log-probabilities in) and cross_entropy (logits in: log p_j = y_j - lse, lse their
// log-sum-exp). Classes weighted by w (all 1 without weights):
//   class id c:  loss = -w_c log p_c,        weight = w_c (0 for the ignored id)
//   one-hot t:   loss = -sum_j w_j t_j log p_j,   weight = 1 unweighted, sum_j w_j t_j weighted
// so L = sum loss / sum weight is PyTorch's weighted mean; d loss / d log p_j = -w_j t_j (one-hot)
// or -w_c at the id.
#pragma once
#include "dtnn/loss_rule.hpp"

namespace dtnn::losses {

struct LogLikelihood {
  double ignored = -1;  // the class id of no target (padding)

  template <class T>
  DTNN_HOST_DEVICE double weight(const rules::LossRow<T>& row, bool* bad) const {
    if (row.ids) {
      const std::int64_t id = rules::class_id(row, ignored, bad);
      return id < 0 ? 0.0 : row.weight_of(id);
    }
    if (!row.w) return 1.0;
    double total = 0;
    for (std::int64_t j = 0; j < row.m; ++j) total += row.w[j] * double(row.t[j]);
    return total;
  }
  // The row's term for log p_j = y_j - shift.
  template <class T>
  DTNN_HOST_DEVICE double loss(const rules::LossRow<T>& row, double shift) const {
    if (row.ids) {
      bool bad = false;
      const std::int64_t id = rules::class_id(row, ignored, &bad);
      return id < 0 ? 0.0 : -row.weight_of(id) * (double(row.y[id]) - shift);
    }
    double sum = 0;
    for (std::int64_t j = 0; j < row.m; ++j)
      if (row.t[j] != T(0)) sum -= row.weight_of(j) * double(row.t[j]) * (double(row.y[j]) - shift);
    return sum;
  }
  // d = scale * d loss / d log p.
  template <class T>
  DTNN_HOST_DEVICE void gradient(const rules::LossRow<T>& row, T scale, T* d) const {
    if (!row.ids) {
      for (std::int64_t j = 0; j < row.m; ++j) d[j] = -T(row.weight_of(j)) * row.t[j] * scale;
      return;
    }
    bool bad = false;
    const std::int64_t id = rules::class_id(row, ignored, &bad);
    for (std::int64_t j = 0; j < row.m; ++j) d[j] = T(0);
    if (id >= 0) d[id] = -T(row.weight_of(id)) * scale;
  }
};

}  // namespace dtnn::losses
