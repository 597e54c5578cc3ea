// Non-finite values (NaN, infinity) in training: what `training.on_nonfinite` acts on.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "dtnn/core_export.hpp"
#include "dtnn/isa.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class Model;
class Loss;

// What a step does when its loss or a gradient is not finite: stop training with a message (the
// default), skip the step (no parameter changes: mixed-precision practice), or go on regardless.
enum class NonFinitePolicy { stop, skip_batch, ignore };
DTNN_CORE_EXPORT NonFinitePolicy parse_nonfinite_policy(std::string_view s);  // "stop", ...

// True when every element is finite. A tensor on a device is copied to the host first.
DTNN_CORE_EXPORT bool all_finite(const Tensor& t);

// The check all_finite runs, one variant per instruction-set level (finite_kernels.cpp): every
// level gives the same answer, on the widest vectors it has. A test can run each
// (finite_kernels().at(level)).
struct FiniteKernels {
  bool (*f32)(const float* p, std::int64_t count);
  bool (*f64)(const double* p, std::int64_t count);
};
DTNN_CORE_EXPORT const isa::Family<FiniteKernels>& finite_kernels();

// Where a batch first goes non-finite, found by running it again with every layer's output and
// every parameter's gradient checked: "layer 3 (conv2d) output", "the loss",
// "gradient of 2.fc.weights", or "" when the rerun stays finite. Runs forward in training mode
// and backward, with the gradients zeroed before and after: no parameter changes.
DTNN_CORE_EXPORT std::string locate_nonfinite(Model& model, Loss& loss, const Tensor& x,
                                              const Tensor& y);

}  // namespace dtnn
