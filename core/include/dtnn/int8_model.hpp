// Int8 models (`dtnn quantize`, docs/precision.md): the walk over a model's int8 products, and the
// file a quantised model is kept in:
//
//   "DTNNINT8" | u32 version | u64 n | n bytes of JSON metadata | data | u64 FNV-1a of all bytes
//   before it
//
// The metadata names the model, where the float checkpoint lies in the data (encode_checkpoint
// without an optimizer: the biases, batchnorm's statistics, the layers that stay float) and each
// product: its layer ("7" for the model's eighth layer, "7.path0.1" inside a block), type, k, n,
// input scale and where its int8 values [k, n] and weight scales [n] (float32) lie. Loading checks
// the magic, version, checksum, every offset and size, and that the model has exactly these
// products with these shapes, before it changes anything; errors name the file and the entry.
#pragma once
#include <filesystem>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"

namespace dtnn {

class Layer;
class Model;
class Int8Product;

struct Int8ProductRef {
  std::string layer;  // "7", "7.path0.1"
  Layer* owner = nullptr;
  Int8Product* product = nullptr;
};

// Every layer of the model (blocks' inner layers too) that has an int8 product, in model order.
DTNN_CORE_EXPORT std::vector<Int8ProductRef> int8_products(Model& model);
// Whether any product of the model is quantised (the model then evaluates in int8).
DTNN_CORE_EXPORT bool runs_int8(Model& model);

// Whether the file starts with the int8 model's magic (false when it cannot be read).
DTNN_CORE_EXPORT bool is_int8_model_file(const std::filesystem::path& file);
// The file's bytes; every product must be ready (Error otherwise).
DTNN_CORE_EXPORT std::string encode_int8_model(Model& model);
// Loads the float checkpoint and every product; `where` names the bytes in errors.
DTNN_CORE_EXPORT void decode_int8_model(const std::string& bytes, const std::string& where,
                                        Model& model);
DTNN_CORE_EXPORT void load_int8_model(const std::filesystem::path& file, Model& model);

}  // namespace dtnn
