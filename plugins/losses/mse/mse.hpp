// mse: the mean squared error over all N outputs of the batch (PyTorch's MSELoss, Keras's
// mean_squared_error), for regression:
//   L = (1/N) sum_i (y_i - t_i)^2        dL/dy_i = 2 (y_i - t_i) / N
// The rule runs on the host here and on a GPU in the twin beside it (cuda_mse.cu).
#pragma once
#include "dtnn/row_rule_loss.hpp"

namespace dtnn::losses {

// A row of m outputs: sum_j (y_j - t_j)^2, weighing m.
struct MseRule : rules::LossRuleBase {
  template <class T>
  DTNN_HOST_DEVICE double weight(const rules::LossRow<T>& row, bool*) const {
    return double(row.m);
  }
  template <class T>
  DTNN_HOST_DEVICE double loss(const rules::LossRow<T>& row) const {
    double sum = 0;
    for (std::int64_t j = 0; j < row.m; ++j) {
      const double e = double(row.y[j]) - double(row.t[j]);
      sum += e * e;
    }
    return sum;
  }
  template <class T>
  DTNN_HOST_DEVICE void gradient(const rules::LossRow<T>& row, T scale, T* d) const {
    for (std::int64_t j = 0; j < row.m; ++j) d[j] = (row.y[j] - row.t[j]) * (T(2) * scale);
  }
};

class Mse : public RowRuleLoss<MseRule> {
 public:
  static constexpr const char* kDescription = "mean squared error over all outputs (regression)";
  static constexpr const char* kParameters = "{}";
  static constexpr const char* kTraits = R"({"aliases": ["mean_squared_error"]})";
  explicit Mse(const Params&) : RowRuleLoss(MseRule{}) {}
  std::string name() const override { return "mse"; }
};

}  // namespace dtnn::losses
