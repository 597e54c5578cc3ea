#include "dtnn/pydtnn_weights.hpp"

#include <map>
#include <numeric>

#include "dtnn/error.hpp"
#include "dtnn/nonfinite.hpp"
#include "dtnn/npz.hpp"
#include "dtnn/pydtnn_arrays.hpp"

namespace dtnn {

namespace {

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
  const std::int64_t n =
      std::accumulate(dims.begin(), dims.end(), std::int64_t(1), std::multiplies<>());
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

using Entry = PydtnnArrays::Entry;

std::vector<Entry> entries_of(Model& model) {
  PydtnnArrays arrays(model.options().layout);
  arrays.walk(
      model.num_layers(), [&](std::size_t i) -> Layer& { return model.layer(i); },
      model.input_shape());
  return arrays.entries();
}

}  // namespace

std::vector<std::int64_t> PydtnnArrays::Entry::canonical() const {
  std::vector<std::int64_t> c;
  for (int p : perm) c.push_back(dims[static_cast<std::size_t>(p)]);
  return c;
}

std::vector<std::int64_t> PydtnnArrays::Entry::file_shape() const {
  std::vector<std::int64_t> c = canonical();
  if (!matrix) return c;
  const std::int64_t last = c.back();
  return {std::accumulate(c.begin(), c.end() - 1, std::int64_t(1), std::multiplies<>()), last};
}

const Tensor* PydtnnArrays::find(const std::vector<Parameter>& params, const std::string& name) {
  for (const Parameter& p : params)
    if (p.name == name) return &p.value;
  return nullptr;
}

void PydtnnArrays::vector(const std::string& key, const std::string& name,
                          const std::vector<Parameter>& params) {
  if (const Tensor* t = find(params, name)) array(key + name, *t, {t->dim(0)}, {0});
}

std::string PydtnnArrays::layer(const std::string& cls) {
  return std::to_string(next_id_++) + "_" + cls + "_";
}

void PydtnnArrays::array(std::string key, const Tensor& tensor, std::vector<std::int64_t> dims,
                         std::vector<int> perm, bool matrix) {
  entries_.push_back({std::move(key), tensor, std::move(dims), std::move(perm), matrix});
}

void PydtnnArrays::walk(std::size_t count, const std::function<Layer&(std::size_t)>& layer_at,
                        Shape input) {
  for (std::size_t i = 0; i < count; ++i) {
    Layer& layer = layer_at(i);
    layer.pydtnn_arrays(*this, input);
    input = layer.output_shape();
  }
}

// A layer that does not name its arrays as PyDTNN does (those PyDTNN 1.x lacks: the sequence
// layers) writes each parameter under its dtnn name, in its own layout: "2_embedding_weights".
void Layer::pydtnn_arrays(PydtnnArrays& out, const Shape&) {
  const std::string key = out.layer(type());
  for (const Parameter& p : parameters()) {
    std::vector<std::int64_t> dims(p.value.shape().begin(), p.value.shape().end());
    std::vector<int> identity(dims.size());
    for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = static_cast<int>(i);
    out.array(key + p.name, p.value, dims, identity);
  }
}

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
                  ", the model needs " +
                  NpyArray{e.tensor.dtype(), e.file_shape(), {}}.shape_str());
  }
  std::vector<Tensor> staged;  // every array read and checked before any weight is changed
  for (const Entry& e : entries) {
    const NpyArray& a = *by_key.at(e.key);
    Tensor host = e.tensor.host_staging();
    dispatch_dtype(e.tensor.dtype(), [&](auto z) {
      using T = decltype(z);
      dispatch_dtype(a.dtype, [&](auto s) {
        using S = decltype(s);
        permute(reinterpret_cast<const S*>(a.data.data()), host.data<T>(), e.dims, e.perm, false);
      });
    });
    if (!all_finite(host))
      throw Error(file.string() + ": " + e.key +
                  " holds a value that is not finite (NaN or infinity, or a float64 beyond "
                  "float32's range): weights must be finite numbers");
    staged.push_back(std::move(host));
  }
  for (std::size_t i = 0; i < entries.size(); ++i) Tensor(entries[i].tensor).copy_from(staged[i]);
}

}  // namespace dtnn
