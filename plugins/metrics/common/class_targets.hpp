// The target class of each row of predictions, for metrics that read class-id labels (a
// sequence's tokens, dtnn/dataset.hpp) as well as one-hot ones.
//   ids:      t holds one value per row: its class id, or kIgnoredLabel (no target);
//   one-hot:  t has the predictions' shape; the target is the row's largest value.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/dataset.hpp"
#include "dtnn/error.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::metrics {

class ClassTargets {
 public:
  ClassTargets(const Tensor& predictions, const Tensor& targets)
      : ids_(targets.numel() != predictions.numel()),
        classes_(ids_ ? predictions.numel() / targets.numel()
                      : predictions.shape()[predictions.shape().rank() - 1]),
        rows_(predictions.numel() / classes_) {}

  std::int64_t classes() const { return classes_; }
  std::int64_t rows() const { return rows_; }
  // Row r's target class, or -1 when the row has none.
  template <class T>
  std::int64_t of(const T* t, std::int64_t r) const {
    if (!ids_) {
      const T* row = t + r * classes_;
      std::int64_t best = 0;
      for (std::int64_t j = 1; j < classes_; ++j) best = row[j] > row[best] ? j : best;
      return best;
    }
    if (double(t[r]) == kIgnoredLabel) return -1;
    if (!(t[r] >= 0 && t[r] < T(classes_)))
      throw Error("metric: target " + std::to_string(r) + " is " + std::to_string(double(t[r])) +
                  ", not a class id in [0, " + std::to_string(classes_) + ")");
    return static_cast<std::int64_t>(t[r]);
  }

 private:
  bool ids_;
  std::int64_t classes_, rows_;
};

}  // namespace dtnn::metrics
