// The PyDTNN classes, keys and layouts (dtnn/pydtnn_arrays.hpp) of the layers whose CPU plugins
// and CUDA twins both hold parameters, written once for both, from the layer's parameters by name.
#pragma once
#include <string>
#include <vector>

#include "dtnn/error.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/pydtnn_arrays.hpp"

namespace dtnn::pydtnn_names {

// The parameter `name` of params (prefix + name for a fused layer's), or null.
inline const Tensor* find(const std::vector<Parameter>& params, const std::string& name) {
  for (const Parameter& p : params)
    if (p.name == name) return &p.value;
  return nullptr;
}

inline void biases(PydtnnArrays& out, const std::string& key, const std::vector<Parameter>& ps) {
  if (const Tensor* b = find(ps, "biases")) out.array(key + "biases", *b, {b->dim(0)}, {0});
}

// Conv2D: weights (K, C, KH, KW) from NHWC's [KH, KW, C, K] (NCHW holds them so), biases (K,).
inline void conv2d(PydtnnArrays& out, const std::vector<Parameter>& ps) {
  const std::string key = out.layer("Conv2D");
  const Tensor& w = *find(ps, "weights");
  out.array(
      key + "weights", w, {w.dim(0), w.dim(1), w.dim(2), w.dim(3)},
      out.layout() == Layout::nhwc ? std::vector<int>{3, 2, 0, 1} : std::vector<int>{0, 1, 2, 3});
  biases(out, key, ps);
}

// DepthwiseConv2D: weights (C, KH, KW) from NHWC's [KH, KW, C], biases (C,).
inline void depthwise_conv2d(PydtnnArrays& out, const std::vector<Parameter>& ps) {
  const std::string key = out.layer("DepthwiseConv2D");
  const Tensor& w = *find(ps, "weights");
  out.array(key + "weights", w, {w.dim(0), w.dim(1), w.dim(2)},
            out.layout() == Layout::nhwc ? std::vector<int>{2, 0, 1} : std::vector<int>{0, 1, 2});
  biases(out, key, ps);
}

// FC: weights (inputs, units), the inputs in PyDTNN's (C, H, W) order after the flattening of an
// NHWC image (the file holds them as a matrix); biases (units,).
inline void fc(PydtnnArrays& out, const std::vector<Parameter>& ps) {
  const std::string key = out.layer("FC");
  const Tensor& w = *find(ps, "weights");
  const Shape& f = out.flattened;
  if (out.layout() == Layout::nhwc && f.rank() == 3 && f.numel() == w.dim(0))
    out.array(key + "weights", w, {f[0], f[1], f[2], w.dim(1)}, {2, 0, 1, 3}, true);
  else
    out.array(key + "weights", w, {w.dim(0), w.dim(1)}, {0, 1});
  biases(out, key, ps);
}

// BatchNormalization: gamma and beta (parameters prefix + "gamma", "beta"), running_mean and
// running_var (the layer's state, in that order), each (C,).
inline void batchnorm(PydtnnArrays& out, const std::vector<Parameter>& ps,
                      const std::vector<Tensor>& state, const std::string& prefix = "") {
  const std::string key = out.layer("BatchNormalization");
  for (const char* name : {"gamma", "beta"}) {
    const Tensor& t = *find(ps, prefix + name);
    out.array(key + name, t, {t.dim(0)}, {0});
  }
  DTNN_CHECK(state.size() == 2, "batchnorm state: running mean and variance");
  out.array(key + "running_mean", state[0], {state[0].dim(0)}, {0});
  out.array(key + "running_var", state[1], {state[1].dim(0)}, {0});
}

}  // namespace dtnn::pydtnn_names
