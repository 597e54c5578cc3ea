// The target class of each row of predictions, for the losses and metrics that read class-id
// labels (a sequence's tokens, dtnn/dataset.hpp) as well as one-hot ones:
//   ids:      t holds one value per row of the predictions' last axis: its class id, or an
//             ignored id (kIgnoredLabel unless the plugin takes another);
//   one-hot:  t has the predictions' shape (one-hot or soft rows).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "dtnn/dataset.hpp"
#include "dtnn/error.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class ClassTargets {
 public:
  // who names the plugin in errors ("nll").
  ClassTargets(const Tensor& predictions, const Tensor& targets, std::string_view who,
               double ignored = kIgnoredLabel)
      : ids_(targets.numel() != predictions.numel()),
        classes_(ids_ ? predictions.numel() / targets.numel()
                      : predictions.shape()[predictions.shape().rank() - 1]),
        rows_(predictions.numel() / classes_),
        ignored_(ignored),
        who_(who) {}

  bool ids() const { return ids_; }
  std::int64_t classes() const { return classes_; }
  std::int64_t rows() const { return rows_; }

  // Row r's class id (ids only), or -1 when it is the ignored id; an Error naming the row when
  // the value is no class id.
  template <class T>
  std::int64_t id(const T* t, std::int64_t r) const {
    if (double(t[r]) == ignored_) return -1;
    if (!(t[r] >= 0 && t[r] < T(classes_)))
      throw Error(std::string(who_) + ": target " + std::to_string(r) + " is " +
                  std::to_string(double(t[r])) + ", not a class id in [0, " +
                  std::to_string(classes_) + ") nor the ignored id");
    return static_cast<std::int64_t>(t[r]);
  }

  // Row r's target class: its id, or the largest value of its one-hot row; -1 when ignored.
  template <class T>
  std::int64_t of(const T* t, std::int64_t r) const {
    if (ids_) return id(t, r);
    const T* row = t + r * classes_;
    std::int64_t best = 0;
    for (std::int64_t j = 1; j < classes_; ++j) best = row[j] > row[best] ? j : best;
    return best;
  }

 private:
  bool ids_;
  std::int64_t classes_, rows_;
  double ignored_;
  std::string_view who_;
};

}  // namespace dtnn
