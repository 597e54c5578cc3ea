// The parameters of adaptive_avgpool2d, with their defaults (what its CPU plugin and its CUDA twin
// both declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kAdaptivePool2dParameters =
    R"({"output_height": 1, "output_width": 1})";

// adaptive_avgpool2d: the output's "output_height" and "output_width", each at least 1.
struct AdaptivePool2d {
  std::int64_t height, width;
  explicit AdaptivePool2d(const Params& p)
      : height(p.get_int("output_height")), width(p.get_int("output_width")) {
    if (height < 1) p.fail("output_height", "a positive number of rows");
    if (width < 1) p.fail("output_width", "a positive number of columns");
  }
  std::string attributes() const {
    return "output=(" + std::to_string(height) + "," + std::to_string(width) + ")";
  }
};

}  // namespace dtnn::layer_parameters
