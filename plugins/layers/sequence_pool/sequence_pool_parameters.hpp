// The parameters of sequence_pool, with their defaults (what its CPU plugin and its CUDA twin both
// declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kSequencePoolParameters = R"({"mode": "mean"})";

// sequence_pool: "mode", "mean" or "first".
struct SequencePool {
  bool mean;
  explicit SequencePool(const Params& p) : mean(p.get_string("mode") == "mean") {
    if (!mean && p.get_string("mode") != "first") p.fail("mode", "\"mean\" or \"first\"");
  }
  std::string attributes() const { return mean ? "mean" : "first"; }
  // The per-sample input (positions, features), checked.
  static void check_input(const Shape& input) {
    if (input.rank() != 2)
      throw Error("sequence_pool: expected a sequence (positions, features), got " + input.str());
  }
};

}  // namespace dtnn::layer_parameters
