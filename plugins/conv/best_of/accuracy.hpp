// best_of's accuracy guard: how far a candidate's three passes land from the plain-loop reference
// computed in float64, on a few samples of the layer's real input (kept from the first training
// step that tunes). One error per pass, each max |got - exact| / max |exact|: relative to the
// largest value of that pass, so that gradients, far smaller than activations, are judged on
// their own scale.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "dtnn/conv_algorithm.hpp"

namespace dtnn::best_of {

struct PassErrors {
  double forward = 0, backward_data = 0, backward_filter = 0;
  double worst() const;
  std::string str() const;  // "3.1e-06 (forward 1.2e-06, backward-data ..., backward-filter ...)"
};

// max |got - exact| / max |exact| over all elements; infinite where got holds a NaN or an
// infinity, or where exact is all zero and got is not.
double relative_error(const Tensor& got, const std::vector<double>& exact);

class AccuracySample {
 public:
  // reference: the plain-loop algorithm, prepared here for g.
  AccuracySample(const ConvGeometry& g, std::shared_ptr<ConvAlgorithm> reference);

  // How many samples of a batch the check takes: up to 8, fewer where a sample's forward pass
  // costs much (the reference runs plain loops in double), never fewer than 1.
  static std::int64_t samples_for(const ConvGeometry& g);

  // Keeps the first samples of a training step's input and the weights (the first call counts).
  void keep_input(const Tensor& x, const Tensor& w);
  // Keeps the first samples of the output gradient (the first call counts).
  void keep_gradient(const Tensor& dy);
  bool complete() const { return have_input_ && have_gradient_; }

  // Runs candidate's three passes on the kept samples (into tensors of its own: nothing of the
  // layer's is touched; backward-filter twice, which must accumulate) and compares them with the
  // reference's, computed once.
  PassErrors errors_of(ConvAlgorithm& candidate);

 private:
  void compute_exact();

  ConvGeometry g_;
  std::shared_ptr<ConvAlgorithm> reference_;
  std::int64_t samples_ = 1;
  Tensor x_, w_, dy_;  // the kept samples, in the layer's dtype
  bool have_input_ = false, have_gradient_ = false, have_exact_ = false;
  std::vector<double> y_exact_, dx_exact_, dw_exact_;
};

}  // namespace dtnn::best_of
