// A model's weights as PyDTNN stores them (Model.store_weights_and_bias: np.savez of
// "<id>_<LayerClass>_<attribute>", e.g. "1_Conv2D_weights"), so that weights move between PyDTNN
// and dtnn in both directions and between dtnn's layouts:
//   ids        PyDTNN's: its Input layer is 0, then every layer in order, activations included,
//              the layers of a block's paths after the block, path by path; a fused layer counts
//              as the layers it fuses (a dtnn file is the same with and without fusions)
//   classes    Conv2D, DepthwiseConv2D, FC, BatchNormalization, ... (PyDTNN's names)
//   shapes     PyDTNN's, in either layout: Conv2D weights (K, C, KH, KW), DepthwiseConv2D (C, KH,
//              KW), FC (inputs, units) with inputs in (C, H, W) order when the FC follows the
//              flattening of an image, biases and BatchNormalization gamma, beta, running_mean,
//              running_var (C,)
// Arrays are read as float32 or float64 and converted to the model's dtype.
#pragma once
#include <filesystem>

#include "dtnn/core_export.hpp"
#include "dtnn/model.hpp"

namespace dtnn {

DTNN_CORE_EXPORT void save_pydtnn_weights(Model& model, const std::filesystem::path& file);
// Every array the model needs must be in the file with its shape (errors name the file, the key
// and the expected shape); arrays the model does not use are ignored. Nothing of the model
// changes unless the whole file is good.
DTNN_CORE_EXPORT void load_pydtnn_weights(Model& model, const std::filesystem::path& file);

}  // namespace dtnn
