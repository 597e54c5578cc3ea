// The parameters of embedding, with their defaults (what its CPU plugin and its CUDA twin both
// declare), and the struct that reads and checks them once for both, so the two accept and
// refuse alike.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kEmbeddingParameters =
    R"({"vocab": 0, "units": 0, "padding_id": -1, "weights_initializer": "normal"})";

// embedding: "vocab" and "units" positive, "padding_id" -1 or an id, "weights_initializer".
struct Embedding {
  std::int64_t vocab, units, padding_id;
  std::string init;
  explicit Embedding(const Params& p)
      : vocab(p.get_int("vocab")),
        units(p.get_int("units")),
        padding_id(p.get_int("padding_id")),
        init(p.get_string("weights_initializer")) {
    if (vocab <= 0) p.fail("vocab", "a positive vocabulary size (\"$vocab\": the dataset's)");
    if (units <= 0) p.fail("units", "a positive vector width");
    if (padding_id < -1 || padding_id >= vocab)
      p.fail("padding_id", "-1 (no padding) or an id below \"vocab\"");
    check_initializer(init, p.key_path("weights_initializer"));
  }
  std::string attributes() const {
    return "vocab=" + std::to_string(vocab) +
           (padding_id >= 0 ? " padding_id=" + std::to_string(padding_id) : "");
  }
  // Per-sample output shape: the input's with "units" appended.
  Shape output_shape(const Shape& input) const {
    if (input.rank() >= Shape::kMaxRank)
      throw Error("embedding: input " + input.str() + " has too many axes");
    Shape s = input;
    s.push_back(units);
    return s;
  }
};

}  // namespace dtnn::layer_parameters
