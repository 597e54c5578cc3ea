// The parameters of maxpool2d and avgpool2d, with their defaults: what their CPU plugins and
// their CUDA twins declare.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kPool2dParameters =  // maxpool2d, avgpool2d
    R"({"pool": [2, 2], "stride": [0, 0], "padding": [0, 0]})";

}  // namespace dtnn::layer_parameters
