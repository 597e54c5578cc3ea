// The parameters of leaky_relu, with their defaults: what its CPU plugin and its CUDA twin both
// declare.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kLeakyReluParameters = R"({"negative_slope": 0.01})";

}  // namespace dtnn::layer_parameters
