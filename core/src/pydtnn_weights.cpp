#include "dtnn/pydtnn_weights.hpp"

#include <map>
#include <numeric>

#include "dtnn/block_layer.hpp"
#include "dtnn/error.hpp"
#include "dtnn/layer_chain.hpp"
#include "dtnn/npz.hpp"

namespace dtnn {

namespace {

// One array of the file: the tensor it fills, the tensor's dims in dtnn's memory order, and the
// permutation that takes them to PyDTNN's (canonical[i] = dims[perm[i]]).
struct Entry {
  std::string key;
  Tensor tensor;
  std::vector<std::int64_t> dims;
  std::vector<int> perm;
  bool matrix = false;  // the file holds the canonical dims as a matrix (all but last, last)

  std::vector<std::int64_t> canonical() const {
    std::vector<std::int64_t> c;
    for (int p : perm) c.push_back(dims[static_cast<std::size_t>(p)]);
    return c;
  }
  std::vector<std::int64_t> file_shape() const {
    std::vector<std::int64_t> c = canonical();
    if (!matrix) return c;
    const std::int64_t last = c.back();
    return {std::accumulate(c.begin(), c.end() - 1, std::int64_t(1), std::multiplies<>()), last};
  }
};

std::string pydtnn_class(const std::string& type) {
  static const std::map<std::string, std::string> names = {
      {"conv2d", "Conv2D"},        {"depthwise_conv2d", "DepthwiseConv2D"},
      {"fc", "FC"},                {"batchnorm", "BatchNormalization"},
      {"add", "AdditionBlock"},    {"concat", "ConcatenationBlock"},
      {"maxpool2d", "MaxPool2D"},  {"avgpool2d", "AveragePool2D"},
      {"dropout", "Dropout"},      {"flatten", "Flatten"},
      {"relu", "Relu"},            {"leaky_relu", "LeakyRelu"},
      {"sigmoid", "Sigmoid"},      {"tanh", "Tanh"},
      {"softmax", "Softmax"}};
  auto it = names.find(type);
  return it == names.end() ? type : it->second;
}

// Walks layers in PyDTNN's id order, collecting the arrays.
class Walker {
 public:
  explicit Walker(Layout layout) : nhwc_(layout == Layout::nhwc) {}
  std::vector<Entry> entries;

  // layers[i] has input shape: the previous one's output (input for the first).
  template <class Get>
  void walk(std::size_t count, Get&& layer_at, Shape input) {
    for (std::size_t i = 0; i < count; ++i) {
      Layer& layer = layer_at(i);
      visit(layer, input);
      input = layer.output_shape();
    }
  }

 private:
  void visit(Layer& layer, const Shape& input) {
    const std::string type = layer.type();
    const int id = next_id_++;
    const std::string base = std::to_string(id) + "_" + pydtnn_class(type) + "_";
    const std::vector<Parameter> params = layer.parameters();
    auto param = [&](const std::string& name) -> const Tensor* {
      for (const auto& p : params)
        if (p.name == name) return &p.value;
      return nullptr;
    };
    const bool relu_fused = layer.attributes().find(" +relu") != std::string::npos;
    if (auto* block = dynamic_cast<BlockLayer*>(&layer)) {
      for (std::size_t p = 0; p < block->num_paths(); ++p) {
        LayerChain& chain = block->path(p);
        walk(chain.size(), [&](std::size_t j) -> Layer& { return chain.layer(j); }, input);
      }
    } else if (type == "conv2d") {
      const Tensor& w = *param("weights");
      // NHWC [KH, KW, C, K] -> (K, C, KH, KW); NCHW holds that already.
      add(base + "weights", w, {w.dim(0), w.dim(1), w.dim(2), w.dim(3)},
          nhwc_ ? std::vector<int>{3, 2, 0, 1} : std::vector<int>{0, 1, 2, 3});
      if (const Tensor* b = param("biases")) add(base + "biases", *b, {b->dim(0)}, {0});
      if (param("batchnorm.gamma"))  // a fused batchnorm: the next id, as the layer it was
        batchnorm(layer, params, "batchnorm.",
                  std::to_string(next_id_++) + "_BatchNormalization_");
    } else if (type == "depthwise_conv2d") {
      const Tensor& w = *param("weights");
      add(base + "weights", w, {w.dim(0), w.dim(1), w.dim(2)},
          nhwc_ ? std::vector<int>{2, 0, 1} : std::vector<int>{0, 1, 2});
      if (const Tensor* b = param("biases")) add(base + "biases", *b, {b->dim(0)}, {0});
    } else if (type == "fc") {
      const Tensor& w = *param("weights");
      if (nhwc_ && flattened_.rank() == 3 && flattened_.numel() == w.dim(0))  // rows (h, w, c)
        add(base + "weights", w, {flattened_[0], flattened_[1], flattened_[2], w.dim(1)},
            {2, 0, 1, 3}, true);
      else
        add(base + "weights", w, {w.dim(0), w.dim(1)}, {0, 1});
      if (const Tensor* b = param("biases")) add(base + "biases", *b, {b->dim(0)}, {0});
    } else if (type == "batchnorm") {
      batchnorm(layer, params, "", base);
    }
    if (type == "flatten") flattened_ = input;
    if (relu_fused) ++next_id_;  // the fused relu's id
  }

  // A batchnorm's gamma, beta (parameters named prefix + ...) and running statistics (the
  // layer's state, in that order), under keys base + attribute.
  void batchnorm(Layer& layer, const std::vector<Parameter>& params, const std::string& prefix,
                 const std::string& base) {
    for (const auto& p : params)
      if (p.name == prefix + "gamma" || p.name == prefix + "beta")
        add(base + p.name.substr(prefix.size()), p.value, {p.value.dim(0)}, {0});
    const std::vector<Tensor> state = layer.state();
    DTNN_CHECK(state.size() == 2, "batchnorm state: running mean and variance");
    add(base + "running_mean", state[0], {state[0].dim(0)}, {0});
    add(base + "running_var", state[1], {state[1].dim(0)}, {0});
  }

  void add(std::string key, const Tensor& t, std::vector<std::int64_t> dims, std::vector<int> perm,
           bool matrix = false) {
    entries.push_back({std::move(key), t, std::move(dims), std::move(perm), matrix});
  }

  bool nhwc_;
  int next_id_ = 1;  // PyDTNN's Input layer is 0
  Shape flattened_;  // the input of the last flatten
};

// dst (canonical order) <- src (dims order) when to_canonical, else the reverse; element types
// may differ.
template <class S, class D>
void permute(const S* src, D* dst, const std::vector<std::int64_t>& dims,
             const std::vector<int>& perm, bool to_canonical) {
  const std::size_t r = dims.size();
  std::vector<std::int64_t> stride(r, 1), cdims(r), cstride(r, 1);
  for (std::size_t i = r - 1; i-- > 0;) stride[i] = stride[i + 1] * dims[i + 1];
  for (std::size_t i = 0; i < r; ++i) cdims[i] = dims[static_cast<std::size_t>(perm[i])];
  for (std::size_t i = r - 1; i-- > 0;) cstride[i] = cstride[i + 1] * cdims[i + 1];
  const std::int64_t n = std::accumulate(dims.begin(), dims.end(), std::int64_t(1),
                                         std::multiplies<>());
  std::vector<std::int64_t> index(r, 0);  // over canonical dims
  for (std::int64_t c = 0; c < n; ++c) {
    std::int64_t at = 0;
    for (std::size_t i = 0; i < r; ++i) at += index[i] * stride[static_cast<std::size_t>(perm[i])];
    if (to_canonical)
      dst[c] = static_cast<D>(src[at]);
    else
      dst[at] = static_cast<D>(src[c]);
    for (std::size_t i = r; i-- > 0;) {
      if (++index[i] < cdims[i]) break;
      index[i] = 0;
    }
  }
}

std::vector<Entry> entries_of(Model& model) {
  Walker w(model.options().layout);
  w.walk(model.num_layers(), [&](std::size_t i) -> Layer& { return model.layer(i); },
         model.input_shape());
  return w.entries;
}

}  // namespace

void save_pydtnn_weights(Model& model, const std::filesystem::path& file) {
  std::vector<std::pair<std::string, NpyArray>> arrays;
  for (const Entry& e : entries_of(model)) {
    NpyArray a;
    a.dtype = e.tensor.dtype();
    a.item_size = static_cast<int>(dtype_size(a.dtype));
    a.shape = e.file_shape();
    a.data.resize(e.tensor.bytes());
    const Tensor host = e.tensor.to(Device::cpu);  // a model on a GPU: copied back
    dispatch_dtype(a.dtype, [&](auto z) {
      using T = decltype(z);
      permute(host.data<T>(), reinterpret_cast<T*>(a.data.data()), e.dims, e.perm, true);
    });
    arrays.emplace_back(e.key, std::move(a));
  }
  write_npz(file, arrays);
}

void load_pydtnn_weights(Model& model, const std::filesystem::path& file) {
  const auto arrays = read_npz(file);
  std::map<std::string, const NpyArray*> by_key;
  for (const auto& [key, a] : arrays) by_key[key] = &a;
  const std::vector<Entry> entries = entries_of(model);
  for (const Entry& e : entries) {  // check everything before changing anything
    auto it = by_key.find(e.key);
    if (it == by_key.end())
      throw Error(file.string() + ": no array '" + e.key + "' (the model needs one of shape " +
                  NpyArray{e.tensor.dtype(), e.file_shape(), {}}.shape_str() + ")");
    if (it->second->kind != 'f')
      throw Error(file.string() + ": " + e.key + " holds integers: expected float32 or float64");
    if (it->second->shape != e.file_shape())
      throw Error(file.string() + ": " + e.key + " has shape " + it->second->shape_str() +
                  ", the model needs " + NpyArray{e.tensor.dtype(), e.file_shape(), {}}.shape_str());
  }
  for (const Entry& e : entries) {
    const NpyArray& a = *by_key.at(e.key);
    Tensor host = e.tensor.host_staging();
    dispatch_dtype(e.tensor.dtype(), [&](auto z) {
      using T = decltype(z);
      dispatch_dtype(a.dtype, [&](auto s) {
        using S = decltype(s);
        permute(reinterpret_cast<const S*>(a.data.data()), host.data<T>(), e.dims, e.perm,
                false);
      });
    });
    Tensor(e.tensor).copy_from(host);
  }
}

}  // namespace dtnn
