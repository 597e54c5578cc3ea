// The parameters of patch_embedding, with their defaults (what its CPU plugin and its CUDA twin
// both declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "initializers.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kPatchEmbeddingParameters =
    R"({"patch": 4, "units": 0, "use_bias": true, "weights_initializer": "glorot_uniform",
    "biases_initializer": "zeros"})";

// patch_embedding: "patch" and "units" positive, "use_bias", the initialisers.
struct PatchEmbedding {
  std::int64_t patch, units;
  bool use_bias;
  Initializers init;
  explicit PatchEmbedding(const Params& p)
      : patch(p.get_int("patch")),
        units(p.get_int("units")),
        use_bias(p.get_bool("use_bias")),
        init(p) {
    if (patch < 1) p.fail("patch", "a positive patch size");
    if (units < 1) p.fail("units", "a positive vector width");
  }
  std::string attributes() const { return "patch=" + std::to_string(patch); }
  // An Error unless an h x w image cuts into patches.
  void check_image(std::int64_t h, std::int64_t w) const {
    if (h % patch != 0 || w % patch != 0)
      throw Error("patch_embedding: a " + std::to_string(h) + "x" + std::to_string(w) +
                  " image does not cut into " + std::to_string(patch) + "x" +
                  std::to_string(patch) + " patches");
  }
};

}  // namespace dtnn::layer_parameters
