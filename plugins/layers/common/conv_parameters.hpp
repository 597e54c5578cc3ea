// The parameters of conv2d and depthwise_conv2d (what their CPU plugins and their CUDA twin,
// cuda_conv_layer.hpp, declare), read and checked once for both, and their PyDTNN arrays
// (dtnn/pydtnn_arrays.hpp): the convolution family's.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "dtnn/conv_algorithm.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/params.hpp"
#include "dtnn/pydtnn_arrays.hpp"
#include "initializers.hpp"

namespace dtnn::layer_parameters {

inline constexpr const char* kConv2dParameters =
    R"({"filters": 0, "kernel": [3, 3], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
        "groups": 1, "use_bias": true, "algorithm": "", "algorithm_params": {}, "weights_initializer": "glorot_uniform",
        "biases_initializer": "zeros", "activation": "", "batchnorm": null})";
inline constexpr const char* kDepthwiseConv2dParameters =
    R"({"kernel": [3, 3], "stride": [1, 1], "padding": [0, 0], "dilation": [1, 1],
        "use_bias": true, "weights_initializer": "glorot_uniform", "biases_initializer": "zeros"})";

// conv2d: "filters" and the window into a geometry (its input set at build), "use_bias",
// "activation" ("" or "relu"), the initialisers. "batchnorm" is each plugin's own.
struct Conv2d {
  ConvGeometry geometry;
  bool use_bias;
  bool relu;
  Initializers init;
  explicit Conv2d(const Params& p) : use_bias(p.get_bool("use_bias")), init(p) {
    geometry.k = p.get_int("filters");
    if (geometry.k <= 0) p.fail("filters", "a positive number of filters");
    geometry.read_window(p);
    geometry.groups = p.get_int("groups");
    if (geometry.groups < 1 || geometry.k % geometry.groups != 0)
      p.fail("groups", "a positive divisor of filters (" + std::to_string(geometry.k) + ")");
    const std::string activation = p.get_string("activation");
    relu = activation == "relu";
    if (!relu && !activation.empty()) p.fail("activation", "\"\" or \"relu\" (conv+relu fused)");
  }
};

// depthwise_conv2d: the window into a geometry (one filter per channel: no "filters"),
// "use_bias", the initialisers.
struct DepthwiseConv2d {
  ConvGeometry geometry;
  bool use_bias;
  Initializers init;
  explicit DepthwiseConv2d(const Params& p) : use_bias(p.get_bool("use_bias")), init(p) {
    geometry.read_window(p);
  }
};

}  // namespace dtnn::layer_parameters

namespace dtnn::pydtnn_names {

// Conv2D: weights (K, C, KH, KW) from NHWC's [KH, KW, C, K] (NCHW holds them so), biases (K,).
inline void conv2d(PydtnnArrays& out, const std::vector<Parameter>& ps) {
  const std::string key = out.layer("Conv2D");
  const Tensor& w = *PydtnnArrays::find(ps, "weights");
  out.array(
      key + "weights", w, {w.dim(0), w.dim(1), w.dim(2), w.dim(3)},
      out.layout() == Layout::nhwc ? std::vector<int>{3, 2, 0, 1} : std::vector<int>{0, 1, 2, 3});
  out.vector(key, "biases", ps);
}

// DepthwiseConv2D: weights (C, KH, KW) from NHWC's [KH, KW, C], biases (C,).
inline void depthwise_conv2d(PydtnnArrays& out, const std::vector<Parameter>& ps) {
  const std::string key = out.layer("DepthwiseConv2D");
  const Tensor& w = *PydtnnArrays::find(ps, "weights");
  out.array(key + "weights", w, {w.dim(0), w.dim(1), w.dim(2)},
            out.layout() == Layout::nhwc ? std::vector<int>{2, 0, 1} : std::vector<int>{0, 1, 2});
  out.vector(key, "biases", ps);
}

}  // namespace dtnn::pydtnn_names
