// How a layer names its tensors in PyDTNN's .npz weight files (dtnn/pydtnn_weights.hpp). PyDTNN
// numbers its layers (Input is 0; activations and the layers a fusion merged count) and keys each
// array "<id>_<Class>_<attribute>" in its own layouts. Every layer describes its part with
// Layer::pydtnn_arrays: the default takes one id and holds each parameter under its dtnn name (the
// layers PyDTNN 1.x lacks); a layer PyDTNN has names its class and arrays as PyDTNN does, and a
// fused layer takes the ids of the layers it merged.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dtnn/core_export.hpp"
#include "dtnn/tensor.hpp"

namespace dtnn {

class Layer;
struct Parameter;

class DTNN_CORE_EXPORT PydtnnArrays {
 public:
  // One array: `tensor` holds `dims` in dtnn's memory order; PyDTNN's order is dims[perm[i]];
  // with matrix, the file holds PyDTNN's dims as a matrix (all but the last, the last).
  struct Entry {
    std::string key;
    Tensor tensor;
    std::vector<std::int64_t> dims;
    std::vector<int> perm;
    bool matrix = false;
    std::vector<std::int64_t> canonical() const;   // PyDTNN's dims
    std::vector<std::int64_t> file_shape() const;  // as the file holds them
  };

  explicit PydtnnArrays(Layout layout) : layout_(layout) {}

  // Takes the next PyDTNN id for a layer of class cls ("Conv2D"); returns its keys' prefix
  // ("3_Conv2D_").
  std::string layer(const std::string& cls);
  void array(std::string key, const Tensor& tensor, std::vector<std::int64_t> dims,
             std::vector<int> perm, bool matrix = false);

  // The parameter `name` of a layer's params, or null.
  static const Tensor* find(const std::vector<Parameter>& params, const std::string& name);
  // Parameter `name`, a vector (n,), as array key + name, when the layer has it ("biases").
  void vector(const std::string& key, const std::string& name,
              const std::vector<Parameter>& params);

  // Layers 0 .. count - 1 (layer_at(i)), the first on `input`, each on the previous one's output.
  void walk(std::size_t count, const std::function<Layer&(std::size_t)>& layer_at, Shape input);

  Layout layout() const { return layout_; }
  // The per-sample input of the latest flatten: an fc after it orders its rows by (c, h, w).
  Shape flattened;
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  Layout layout_;
  int next_id_ = 1;  // PyDTNN's Input layer is 0
  std::vector<Entry> entries_;
};

}  // namespace dtnn
