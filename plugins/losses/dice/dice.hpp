// dice: the soft Dice loss of segmentation (a U-Net's), per sample over all its outputs p (a
// sigmoid's, one per pixel) against the mask t, averaged over the n samples of the batch:
//   D_s = (2 I_s + smooth) / S_s,   I_s = sum_i p_i t_i,   S_s = sum_i p_i + sum_i t_i + smooth
//   L = 1 - mean_s D_s,             dL/dp_i = -(1/n) (2 t_i S_s - (2 I_s + smooth)) / S_s^2
// smooth (1 by default, as Keras' U-Net recipes take it) keeps an empty mask predicted empty at
// D = 1. The rule runs on the host here and on a GPU in the twin beside it (cuda_dice.cu).
#pragma once
#include <cmath>

#include "dtnn/row_rule_loss.hpp"

namespace dtnn::losses {

// A row is a sample: 1 - D_s, weighing 1.
struct DiceRule : rules::LossRuleBase {
  static constexpr bool kPerSample = true;
  double smooth;

  template <class T>
  DTNN_HOST_DEVICE double weight(const rules::LossRow<T>&, bool*) const {
    return 1.0;
  }
  template <class T>
  DTNN_HOST_DEVICE double loss(const rules::LossRow<T>& row) const {
    double overlap = 0, sum = 0;
    sums(row, &overlap, &sum);
    return sum > 0 ? 1.0 - (2 * overlap + smooth) / sum : 0.0;
  }
  template <class T>
  DTNN_HOST_DEVICE void gradient(const rules::LossRow<T>& row, T scale, T* d) const {
    double overlap = 0, sum = 0;
    sums(row, &overlap, &sum);
    const double num = 2 * overlap + smooth;
    const double factor = sum > 0 ? -double(scale) / (sum * sum) : 0.0;
    for (std::int64_t j = 0; j < row.m; ++j)
      d[j] = static_cast<T>(factor * (2 * double(row.t[j]) * sum - num));
  }

 private:
  // I_s and S_s.
  template <class T>
  DTNN_HOST_DEVICE void sums(const rules::LossRow<T>& row, double* overlap, double* sum) const {
    *sum = smooth;
    for (std::int64_t j = 0; j < row.m; ++j) {
      *overlap += double(row.y[j]) * double(row.t[j]);
      *sum += double(row.y[j]) + double(row.t[j]);
    }
  }
};

class Dice : public RowRuleLoss<DiceRule> {
 public:
  static constexpr const char* kDescription =
      "soft Dice loss of segmentation masks (1 - mean Dice per sample)";
  static constexpr const char* kParameters = R"({"smooth": 1.0})";
  static constexpr const char* kTraits = R"({"aliases": ["dice_loss"]})";
  explicit Dice(const Params& p) : RowRuleLoss(DiceRule{{}, p.get_double("smooth")}) {
    if (!(rule().smooth >= 0) || !std::isfinite(rule().smooth)) p.fail("smooth", "a number >= 0");
  }
  std::string name() const override { return "dice"; }
};

}  // namespace dtnn::losses
