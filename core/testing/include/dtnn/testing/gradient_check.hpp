// Finite-difference gradient check of a Layer (float64): with L = sum(y * r) for a fixed random r,
// compares backward's dx and parameter gradients with (L(v + h) - L(v - h)) / 2h.
#pragma once
#include <string>

#include "dtnn/layer.hpp"
#include "dtnn/sequence_context.hpp"

namespace dtnn::testing {

struct GradientCheck {
  double input_error = 0;      // max relative error of dx
  double parameter_error = 0;  // max relative error over every parameter gradient
  double memory_error = 0;     // max relative error of the decoder memory's gradient, if any
  std::int64_t checked = 0;    // values perturbed
};

// The values an input takes: uniform in [lo, hi] (a layer's domain: log's x > 0), or whole token
// ids in [0, tokens) when tokens > 0.
struct InputValues {
  std::int64_t tokens = 0;
  double lo = -1.0, hi = 1.0;
};

// layer must be built for batch `batch` in float64; x is filled from seed as `values` says. Token
// ids are not perturbed (their gradient must be zero). A layer
// that reads a decoder memory (cross-attention) has the memory's gradient checked too: memory is
// the one its build context held, its value filled for at least `batch` samples.
GradientCheck check_gradients(Layer& layer, const Shape& input_shape, std::int64_t batch,
                              Layout layout, std::uint64_t seed = 7, double step = 1e-6,
                              InputValues values = {}, DecoderMemory* memory = nullptr);

// x filled from seed as values says.
void fill_input(Tensor& x, std::uint64_t seed, const InputValues& values);

}  // namespace dtnn::testing
