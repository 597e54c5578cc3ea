// The parameters of layer_norm, with their defaults: what its CPU plugin and its CUDA twin both
// declare.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kLayerNormParameters = R"({"epsilon": 1e-5})";

}  // namespace dtnn::layer_parameters
