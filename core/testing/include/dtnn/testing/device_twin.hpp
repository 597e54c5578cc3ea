// Conformance of a layer plugin's twin on a device (the same type, its descriptor's device, e.g.
// conv2d on cuda) against its CPU plugin: both built from the same parameters and seed on the same
// input, the twins must start from the same parameters and agree on the outputs (training and
// evaluation mode), the input gradient, every parameter gradient and the state (batchnorm's running
// statistics). The device's runtime must be installed (install_device_runtime).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dtnn/params.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {
class Registry;
}

namespace dtnn::testing {

struct TwinCheck {
  std::string what;  // "parameters at build: weights", "forward (train)", "input gradient", ...
  double error = 0;  // the largest |cpu - device| / (1 + |cpu|) over the elements
};

// What the check feeds the twins besides the input's shape.
struct TwinInputs {
  double lo = -1.0, hi = 1.0;  // the inputs' values, uniform in [lo, hi)
  std::int64_t tokens = 0;     // > 0: whole token ids in [0, tokens) instead (an embedding's input)
  std::vector<std::int64_t> lengths;  // padded sequences' lengths, one per sample (batch of them)
};

// input: per sample, NCHW (the device layers' layout).
std::vector<TwinCheck> check_device_twin(const Registry& registry, Device device,
                                         const std::string& type, const Params& params,
                                         const Shape& input, DType dtype, std::int64_t batch = 3,
                                         const TwinInputs& inputs = {});

// The error the twins may show: reduction order and library kernels differ (1e-9 in float64,
// 2e-4 in float32 without TF32); parameters at build must agree exactly.
double twin_tolerance(DType dtype);

// A host NCHW tensor of values uniform in [-1, 1) from seed.
Tensor random_tensor(const Shape& shape, DType dtype, std::uint64_t seed);

// The largest |a - b| / (1 + |a|) over the elements (either may live on a device).
double max_relative_difference(const Tensor& a, const Tensor& b);

}  // namespace dtnn::testing
