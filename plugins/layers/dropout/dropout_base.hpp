// dropout's device-independent half, from which its CPU plugin (dropout.cpp) and its CUDA twin
// (cuda_dropout.cu) derive: the rate, the shape, and the mask's step (the state checkpoints carry),
// so that both draw a step's mask from the same stream and each adds only its kernels.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dropout_parameters.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/rng.hpp"

namespace dtnn::layer_parameters {

class DropoutBase : public Layer {
 public:
  explicit DropoutBase(const Params& p) : rate_(dropout_rate(p)) {}
  std::string type() const override { return "dropout"; }
  Shape output_shape() const override { return shape_; }
  std::string attributes() const override { return "rate=" + std::to_string(rate_).substr(0, 4); }
  std::vector<Tensor> state() override { return {state_}; }

 protected:
  void build_state(const LayerBuildContext& ctx) {
    shape_ = ctx.input_shape;
    seed_ = ctx.seed;
    state_ = Tensor::zeros(Shape{2}, DType::float64);
  }
  // The stream of this step's mask, for a training forward: a new step once the previous mask
  // has been used by a backward.
  std::uint64_t mask_stream() {
    double* st = state_.data<double>();  // [step, stepped]
    if (st[1] != 0) {
      st[0] += 1;
      st[1] = 0;
    }
    return Rng::derive(seed_, static_cast<std::uint64_t>(st[0]));
  }
  // Backward has used this step's mask.
  void mask_used() { state_.data<double>()[1] = 1; }

  double rate_;
  Shape shape_;

 private:
  std::uint64_t seed_ = 0;
  Tensor state_;  // host float64 [step, stepped]: the mask's step, carried by checkpoints
};

}  // namespace dtnn::layer_parameters
