// Loss: the scalar training objective and its gradient, averaged over the batch.
#pragma once
#include "dtnn/core_export.hpp"
#include "dtnn/params.hpp"
#include "dtnn/plugin.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class DTNN_CORE_EXPORT Loss : public Plugin {
 public:
  ~Loss() override;
  virtual std::string name() const = 0;
  // y_pred, y_true: [n, classes]. Returns the mean loss over the n rows.
  virtual double forward(const Tensor& y_pred, const Tensor& y_true) = 0;
  // dy = dLoss/dy_pred, overwritten.
  virtual void backward(const Tensor& y_pred, const Tensor& y_true, Tensor& dy) = 0;
  // When the model ends in softmax and this returns true, the model skips the softmax backward
  // and asks for dLoss/dlogits directly (numerically stable, and one pass instead of two).
  virtual bool has_softmax_gradient() const { return false; }
  virtual void backward_through_softmax(const Tensor& probabilities, const Tensor& y_true,
                                        Tensor& dlogits);
};

// The factory of a loss plugin whose class is made from its parameters.
template <class L>
Plugin* create_loss(const Params& p, const PluginContext&) {
  return new L(p);
}

}  // namespace dtnn
