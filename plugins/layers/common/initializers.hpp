// The initialiser names of the built-in layers with weights and biases, read and checked once.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/error.hpp"
#include "dtnn/initializer.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"

namespace dtnn::layer_parameters {

// The two initialiser names of a layer with weights and biases, checked.
struct Initializers {
  std::string weights, biases;
  explicit Initializers(const Params& p)
      : weights(p.get_string("weights_initializer")), biases(p.get_string("biases_initializer")) {
    check_initializer(weights, p.key_path("weights_initializer"));
    check_initializer(biases, p.key_path("biases_initializer"));
  }
};

}  // namespace dtnn::layer_parameters
