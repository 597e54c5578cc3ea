// Row rules: how a metric plugin says what one row of a batch adds to its totals, so that one
// definition runs on the host (dtnn/row_rule_metric.hpp's executor) and in its CUDA twin's kernel
// (plugins/cuda/common/device_metric.cuh), as an optimizer's update rule does
// (dtnn/apply_rule.hpp).
//
// A rule is a small copyable struct, written in the metric's own folder, with
//
//   // How many totals a row of m values may add to (its largest index + 1).
//   DTNN_HOST_DEVICE std::int64_t totals_reached(std::int64_t m) const;
//   // Writes the row's contributions (at most kMaxContributions) to out and returns how many,
//   // each with an index below totals_reached(m). p, t: the row's prediction and target.
//   template <class T>
//   DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, Contribution* out) const;
//
// This header gives the vocabulary rules share. Compiled as host and device code under nvcc.
#pragma once
#include <cstdint>

#include "dtnn/host_device.hpp"

namespace dtnn::rules {

// totals[index] += value.
struct Contribution {
  std::int64_t index;
  double value;
};
inline constexpr int kMaxContributions = 2;

// The index of the first largest of m values (as std::max_element).
template <class T>
DTNN_HOST_DEVICE std::int64_t argmax(const T* v, std::int64_t m) {
  std::int64_t best = 0;
  for (std::int64_t j = 1; j < m; ++j)
    if (v[j] > v[best]) best = j;
  return best;
}

DTNN_HOST_DEVICE inline double magnitude(double v) { return v < 0 ? -v : v; }

// A mean over rows: the row's value to totals[0], the row itself (1) to totals[1].
DTNN_HOST_DEVICE inline int mean_term(double value, Contribution* out) {
  out[0] = {0, value};
  out[1] = {1, 1.0};
  return 2;
}
// The base of a rule whose row() returns mean_term(...).
struct MeanRule {
  DTNN_HOST_DEVICE std::int64_t totals_reached(std::int64_t) const { return 2; }
};

// The row's contributions in exactly kMaxContributions slots, the unused ones with index -1: the
// fixed-size form both executors fold into the totals (a kernel writes one such group per row).
template <class Rule, class T>
DTNN_HOST_DEVICE void row_slots(const Rule& rule, const T* p, const T* t, std::int64_t m,
                                Contribution* slots) {
  for (int k = rule.row(p, t, m, slots); k < kMaxContributions; ++k) slots[k] = {-1, 0.0};
}

}  // namespace dtnn::rules
