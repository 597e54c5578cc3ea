// The parameters of dropout, with their defaults (what its CPU plugin and its CUDA twin both
// declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kDropoutParameters = R"({"rate": 0.5})";

// dropout's "rate", in [0, 1).
inline double dropout_rate(const Params& p) {
  const double rate = p.get_double("rate");
  if (rate < 0.0 || rate >= 1.0) p.fail("rate", "a number in [0, 1)");
  return rate;
}

}  // namespace dtnn::layer_parameters
