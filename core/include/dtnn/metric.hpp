// Metric: accumulated over batches as additive totals, so that ranks can sum their totals and
// every rank computes the same global value. Most metrics are sums over rows of a rule's
// contributions (dtnn/row_rule_metric.hpp), which also runs them on a GPU.
#pragma once
#include <span>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/params.hpp"
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
  // Told the dataset's class count before num_totals() is asked (metrics sized by it).
  virtual void set_classes(std::int64_t classes) { (void)classes; }
  // Where the tensors accumulate() reads live: the host, or the model's device for a device
  // plugin ("cuda_<name>"), which reads the predictions there instead of a copy on the host.
  virtual Device device() const { return Device::cpu; }
  // A metric that is a matrix (a confusion matrix) gives its rows here, value() being its
  // summary; the history records both. Empty for the others.
  virtual std::vector<std::vector<double>> matrix(std::span<const double> totals) const {
    (void)totals;
    return {};
  }
};

// The factory of a metric plugin whose class is made from its parameters.
template <class M>
Plugin* create_metric(const Params& p, const PluginContext&) {
  return new M(p);
}

}  // namespace dtnn
