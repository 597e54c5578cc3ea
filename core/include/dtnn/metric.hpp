// Metric: accumulated over batches as additive totals, so that ranks can sum their totals and
// every rank computes the same global value.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Metric : public Plugin {
 public:
  ~Metric() override;
  virtual std::string name() const = 0;        // "categorical_accuracy"
  virtual std::size_t num_totals() const = 0;  // length of the totals vector
  // Adds this batch's contribution to totals (y_pred, y_true: [n, classes]). Must not allocate.
  virtual void accumulate(const Tensor& y_pred, const Tensor& y_true,
                          std::span<double> totals) const = 0;
  virtual double value(std::span<const double> totals) const = 0;
};

}  // namespace dtnn
