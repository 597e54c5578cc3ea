// The parameters of fc, with their defaults (what its CPU plugin and its CUDA twin both
// declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
// Its PyDTNN arrays (dtnn/pydtnn_arrays.hpp) too.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/pydtnn_arrays.hpp"
#include "initializers.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kFcParameters =
    R"({"units": 0, "use_bias": true, "weights_initializer": "glorot_uniform",
        "biases_initializer": "zeros", "flatten": true, "gelu": null})";

// fc: {"units", "use_bias", "weights_initializer", "biases_initializer", "flatten", "gelu"}.
struct Fc {
  std::int64_t units;
  bool use_bias;
  Initializers init;
  // true: each sample is one row (its values taken flat); false: each position of the last axis
  // is a row, {..., in} -> {..., units} (Keras' Dense, a transformer's projections).
  bool flatten;
  // A gelu layer's parameters when a gelu follows, fused into the fc (the fusion option fc_gelu):
  // y = gelu(x w + b).
  std::optional<Params> gelu;
  explicit Fc(const Params& p)
      : units(p.get_int("units")),
        use_bias(p.get_bool("use_bias")),
        init(p),
        flatten(p.get_bool("flatten")) {
    if (units <= 0) p.fail("units", "a positive number of output units");
    if (!p.is_null("gelu")) gelu = p.get_object("gelu");
  }
  // Input features per row and the per-sample output shape for a per-sample input.
  std::int64_t features(const Shape& input) const {
    return flatten ? input.numel() : input[input.rank() - 1];
  }
  Shape output_shape(const Shape& input) const {
    if (flatten) return Shape{units};
    Shape out = input;
    out[out.rank() - 1] = units;
    return out;
  }
};

}  // namespace dtnn::layer_parameters

namespace dtnn::pydtnn_names {

// FC: weights (inputs, units), the inputs in PyDTNN's (C, H, W) order after the flattening of an
// NHWC image (the file holds them as a matrix); biases (units,).
inline void fc(PydtnnArrays& out, const std::vector<Parameter>& ps) {
  const std::string key = out.layer("FC");
  const Tensor& w = *PydtnnArrays::find(ps, "weights");
  const Shape& f = out.flattened;
  if (out.layout() == Layout::nhwc && f.rank() == 3 && f.numel() == w.dim(0))
    out.array(key + "weights", w, {f[0], f[1], f[2], w.dim(1)}, {2, 0, 1, 3}, true);
  else
    out.array(key + "weights", w, {w.dim(0), w.dim(1)}, {0, 1});
  out.vector(key, "biases", ps);
}

}  // namespace dtnn::pydtnn_names
