// The parameters of positional_encoding, with their defaults (what its CPU plugin and its CUDA twin
// both declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kPositionalEncodingParameters =
    R"({"kind": "sinusoidal", "weights_initializer": "normal"})";

// positional_encoding: "kind" ("sinusoidal" or "learned"), "weights_initializer".
struct PositionalEncoding {
  bool learned;
  std::string init;
  explicit PositionalEncoding(const Params& p)
      : learned(p.get_string("kind") == "learned"), init(p.get_string("weights_initializer")) {
    if (!learned && p.get_string("kind") != "sinusoidal")
      p.fail("kind", "\"sinusoidal\" or \"learned\"");
    check_initializer(init, p.key_path("weights_initializer"));
  }
  // The table p [positions, width] the input's shape needs, on the host: the learned one
  // initialised from seed, the sinusoidal one (Vaswani et al. 2017) computed.
  Tensor table(const Shape& input, DType dtype, std::uint64_t seed) const {
    if (input.rank() != 2)
      throw Error("positional_encoding: expected a sequence (positions, features), got " +
                  input.str());
    const std::int64_t positions = input[0], width = input[1];
    Tensor p = Tensor::empty(input, dtype);
    if (learned) {
      initialize(p, init, positions, width, seed);
      return p;
    }
    dispatch_dtype(dtype, [&](auto z) {
      using T = decltype(z);
      T* out = p.data<T>();
      for (std::int64_t t = 0; t < positions; ++t)
        for (std::int64_t i = 0; i < width; ++i) {
          const double angle = double(t) / std::pow(10000.0, double(2 * (i / 2)) / double(width));
          out[t * width + i] = T(i % 2 == 0 ? std::sin(angle) : std::cos(angle));
        }
    });
    return p;
  }
};

}  // namespace dtnn::layer_parameters
