// The parameters of upsample2d, with their defaults (what its CPU plugin and its CUDA twin both
// declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kUpsample2dParameters = R"({"size": [2, 2]})";

// upsample2d: "size", the whole factors (rows, columns), each from 1 to 64.
struct Upsample2d {
  std::int64_t rows, columns;
  explicit Upsample2d(const Params& p) {
    const auto [sh, sw] = p.get_pair("size", 1);
    if (sh > 64 || sw > 64) p.fail("size", "factors from 1 to 64");
    rows = sh, columns = sw;
  }
  std::string attributes() const {
    return "size=(" + std::to_string(rows) + "," + std::to_string(columns) + ") nearest";
  }
};

}  // namespace dtnn::layer_parameters
