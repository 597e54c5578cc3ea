// The per-row formulas of the metrics, shared by the CPU plugins (plugins/metrics) and their CUDA
// twins (plugins/cuda): one definition, two executors, as dtnn/update_rules.hpp is for the
// optimizers. A metric's totals (dtnn/metric.hpp) are sums over rows; its rule gives one row's
// contributions to them, at most kMaxContributions (index, value) pairs, from the row's
// prediction p and target t (m values each). Compiled as host and device code under nvcc.
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

// What a row adds to the totals, by metric (k = argmax t, the target class):
enum class RowMetric : std::int32_t {
  categorical_accuracy,  // {argmax p == k} to 0, 1 to 1 (the rows)
  categorical_hinge,     // max(0, 1 + max_j (1 - t_j) p_j - sum_j t_j p_j) to 0, 1 to 1
  categorical_mae,       // |1 - p_k| to 0, 1 to 1
  categorical_mse,       // (1 - p_k)^2 to 0, 1 to 1
  regression_mae,        // mean_j |p_j - t_j| to 0, 1 to 1
  regression_mse,        // mean_j (p_j - t_j)^2 to 0, 1 to 1
  binary_counts,         // 1 to TP (0), FP (1) or FN (2) of the decision "class `positive`"
  binary_confusion,      // binary_counts, and 1 to 3 (the rows)
  confusion,             // 1 to k m + argmax p: the cell [target][prediction] of an m x m matrix
};

struct MetricRule {
  RowMetric kind = RowMetric::categorical_accuracy;
  // The decision's class for binary_counts and binary_confusion: a row is positive when its
  // argmax is `positive`, or, with a single output (m = 1), when that output is >= 0.5.
  std::int64_t positive = 1;

  // How many totals a row of m values may add to (its largest index + 1).
  DTNN_HOST_DEVICE std::int64_t totals_reached(std::int64_t m) const {
    switch (kind) {
      case RowMetric::binary_counts:
        return 3;
      case RowMetric::binary_confusion:
        return 4;
      case RowMetric::confusion:
        return m * m;
      default:
        return 2;  // a mean over rows
    }
  }

  // Writes this row's contributions to out; returns how many (0 to kMaxContributions), each with
  // an index below totals_reached(m).
  template <class T>
  DTNN_HOST_DEVICE int row(const T* p, const T* t, std::int64_t m, Contribution* out) const {
    switch (kind) {
      case RowMetric::categorical_accuracy:
        return mean_term(argmax(p, m) == argmax(t, m) ? 1.0 : 0.0, out);
      case RowMetric::categorical_hinge: {
        double pos = 0, neg = (1.0 - double(t[0])) * double(p[0]);
        for (std::int64_t j = 0; j < m; ++j) {
          pos += double(t[j]) * double(p[j]);
          const double wrong = (1.0 - double(t[j])) * double(p[j]);
          neg = wrong > neg ? wrong : neg;
        }
        const double hinge = neg - pos + 1.0;
        return mean_term(hinge > 0 ? hinge : 0.0, out);
      }
      case RowMetric::categorical_mae:
        return mean_term(magnitude(1.0 - double(p[argmax(t, m)])), out);
      case RowMetric::categorical_mse: {
        const double e = 1.0 - double(p[argmax(t, m)]);
        return mean_term(e * e, out);
      }
      case RowMetric::regression_mae:
      case RowMetric::regression_mse: {
        double s = 0;
        for (std::int64_t j = 0; j < m; ++j) {
          const double e = double(p[j]) - double(t[j]);
          s += kind == RowMetric::regression_mae ? magnitude(e) : e * e;
        }
        return mean_term(s / double(m), out);
      }
      case RowMetric::binary_counts:
      case RowMetric::binary_confusion: {
        const bool predicted = is_positive(p, m), actual = is_positive(t, m);
        int n = 0;
        if (predicted || actual) out[n++] = {predicted ? (actual ? 0 : 1) : 2, 1.0};
        if (kind == RowMetric::binary_confusion) out[n++] = {3, 1.0};
        return n;
      }
      case RowMetric::confusion:
        out[0] = {argmax(t, m) * m + argmax(p, m), 1.0};
        return 1;
    }
    return 0;
  }

 private:
  // A mean over rows: the row's value to totals[0], the row itself to totals[1].
  DTNN_HOST_DEVICE static int mean_term(double value, Contribution* out) {
    out[0] = {0, value};
    out[1] = {1, 1.0};
    return 2;
  }
  DTNN_HOST_DEVICE static double magnitude(double v) { return v < 0 ? -v : v; }
  template <class T>
  DTNN_HOST_DEVICE bool is_positive(const T* v, std::int64_t m) const {
    return m == 1 ? v[0] >= T(0.5) : argmax(v, m) == positive;
  }
};

// The row's contributions in exactly kMaxContributions slots, the unused ones with index -1: the
// fixed-size form both executors fold into the totals (a kernel writes one such group per row).
template <class T>
DTNN_HOST_DEVICE void row_slots(const MetricRule& rule, const T* p, const T* t, std::int64_t m,
                                Contribution* slots) {
  for (int k = rule.row(p, t, m, slots); k < kMaxContributions; ++k) slots[k] = {-1, 0.0};
}

}  // namespace dtnn::rules
