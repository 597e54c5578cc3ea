// Loss rules: how a loss plugin says what one row of a batch adds to its value and its gradient,
// so that one definition runs on the host (dtnn/row_rule_loss.hpp's executor) and in its CUDA
// twin's kernels (plugins/cuda/common/device_loss.cuh), as a metric's row rule does
// (dtnn/row_rule.hpp). Every loss is a weighted mean over rows,
//
//   L = sum_r loss(r) / sum_r weight(r),        dL/dy_r = d loss(r)/dy_r / sum_r weight(r)
//
// (weight: 1 for a mean over rows, m for a mean over every value, a class weight, 0 for a row
// whose target is ignored). A rule is a small copyable struct, written in the loss's own folder,
// deriving from LossRuleBase (and overriding its flags), with
//
//   // The row's weight in the mean; *bad set when its target is no class id.
//   template <class T> DTNN_HOST_DEVICE double weight(const LossRow<T>& row, bool* bad) const;
//   // The row's term of the sum (0 for an ignored row).
//   template <class T> DTNN_HOST_DEVICE double loss(const LossRow<T>& row) const;
//   // d[0..m) = scale * d loss(row) / dy, written whole (scale: 1 / sum_r weight(r)).
//   template <class T> DTNN_HOST_DEVICE void gradient(const LossRow<T>& row, T scale, T* d) const;
//
// and, with kSoftmaxGradient, softmax_gradient(row, scale, d): d loss(row) / d logits for y the
// probabilities of a softmax in front (the model then skips the softmax's backward).
// Compiled as host and device code under nvcc.
#pragma once
#include <cstdint>

#include "dtnn/host_device.hpp"

namespace dtnn::rules {

// One row of a loss's input: m predictions y, their targets t (m values; or, with ids, one value:
// the row's class id), the class weights w (w[j] for class j, null for all 1).
template <class T>
struct LossRow {
  const T* y;
  const T* t;
  std::int64_t m;
  bool ids;
  const double* w;
  DTNN_HOST_DEVICE double weight_of(std::int64_t j) const { return w ? w[j] : 1.0; }
};

struct LossRuleBase {
  // A row is a sample (all its values) rather than the last axis of the predictions.
  static constexpr bool kPerSample = false;
  // Targets may be class ids (one per row, then `ignored` is the id of no target) as well as
  // rows of m values.
  static constexpr bool kClassIds = false;
  // The rule gives softmax_gradient().
  static constexpr bool kSoftmaxGradient = false;
};

// The row's class id (ids), or -1 for the ignored id or a value that is no class id (then *bad).
template <class T>
DTNN_HOST_DEVICE std::int64_t class_id(const LossRow<T>& row, double ignored, bool* bad) {
  const double v = double(row.t[0]);
  if (v == ignored) return -1;
  if (!(v >= 0 && v < double(row.m))) {
    *bad = true;
    return -1;
  }
  return static_cast<std::int64_t>(v);
}

// The smallest probability a loss takes the log of (PyDTNN's --loss-eps): eps, or for 0 the
// dtype's own (1e-7 in float32, 1e-15 in float64).
template <class T>
DTNN_HOST_DEVICE T probability_floor(double eps) {
  if (eps > 0) return T(eps);
  return sizeof(T) == sizeof(float) ? T(1e-7) : T(1e-15);
}

}  // namespace dtnn::rules
