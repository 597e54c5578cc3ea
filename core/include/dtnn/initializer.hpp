// Weight initialisers by name, as Keras and PyDTNN define them (l: the uniform limit):
//   glorot_uniform  U(-l, l), l = sqrt(6 / (fan_in + fan_out))
//   glorot_normal   N(0, 2 / (fan_in + fan_out))
//   he_uniform      l = sqrt(6 / fan_in)        he_normal      N(0, 2 / fan_in)
//   lecun_uniform   l = sqrt(3 / fan_in)        lecun_normal   N(0, 1 / fan_in)
//   normal          N(0, 1) (PyTorch's embeddings)
//   small_normal    N(0, 0.02^2) (GPT-2's)
//   zeros, ones
// Layers compute fan_in/fan_out from their logical dimensions, so the layout does not matter.
#pragma once
#include <cstdint>
#include <string>

#include "dtnn/core_export.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

DTNN_CORE_EXPORT void initialize(Tensor& t, const std::string& initializer, std::int64_t fan_in,
                                 std::int64_t fan_out, std::uint64_t seed);
// A new tensor on `device` holding what initialize gives on the host with these arguments: the
// host draws the values, so a layer and its GPU twin start from the very same weights.
inline Tensor initialized(const Shape& shape, DType dtype, const std::string& initializer,
                          std::int64_t fan_in, std::int64_t fan_out, std::uint64_t seed,
                          Device device = Device::cpu) {
  Tensor host = Tensor::empty(shape, dtype, Layout::nchw);
  initialize(host, initializer, fan_in, fan_out, seed);
  return host.to(device);
}
// Throws an Error naming the valid initialisers when name is not one of them.
DTNN_CORE_EXPORT void check_initializer(const std::string& name, const std::string& where);

}  // namespace dtnn
