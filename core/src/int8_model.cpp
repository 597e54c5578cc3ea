// Int8 model files and the walk over a model's int8 products (dtnn/int8_model.hpp).
#include "dtnn/int8_model.hpp"

#include <cstring>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>

#include "dtnn/checkpoint.hpp"
#include "dtnn/digest.hpp"
#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/int8_product.hpp"
#include "dtnn/layer.hpp"
#include "dtnn/model.hpp"

namespace dtnn {

namespace {

using json = nlohmann::json;

constexpr char kMagic[8] = {'D', 'T', 'N', 'N', 'I', 'N', 'T', '8'};
constexpr std::uint32_t kVersion = 1;
constexpr std::size_t kHeader = sizeof kMagic + sizeof(std::uint32_t) + sizeof(std::uint64_t);

void walk(Layer& layer, const std::string& name, std::vector<Int8ProductRef>& out) {
  if (Int8Product* p = layer.int8_product()) out.push_back({name, &layer, p});
  for (auto& [inner, l] : layer.inner_layers()) walk(*l, name + "." + inner, out);
}

template <class T>
void append(std::string& data, const T* values, std::size_t count) {
  data.append(reinterpret_cast<const char*>(values), count * sizeof(T));
}

}  // namespace

std::vector<Int8ProductRef> int8_products(Model& model) {
  std::vector<Int8ProductRef> out;
  for (std::size_t i = 0; i < model.num_layers(); ++i) walk(model.layer(i), std::to_string(i), out);
  return out;
}

bool runs_int8(Model& model) {
  for (const auto& p : int8_products(model))
    if (p.product->ready()) return true;
  return false;
}

bool is_int8_model_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[sizeof kMagic] = {};
  return in.read(magic, sizeof magic) && std::memcmp(magic, kMagic, sizeof kMagic) == 0;
}

std::string encode_int8_model(Model& model) {
  const std::string checkpoint = encode_checkpoint(model, nullptr, CheckpointInfo{});
  std::string data = checkpoint;
  json products = json::array();
  for (const auto& ref : int8_products(model)) {
    const Int8Product& p = *ref.product;
    if (!p.ready())
      throw Error("int8 model: layer " + ref.layer + " (" + ref.owner->type() +
                  ") is not quantised");
    json entry = {{"layer", ref.layer}, {"type", ref.owner->type()},      {"k", p.k()},
                  {"n", p.n()},         {"input_scale", p.input_scale()}, {"values", data.size()}};
    append(data, p.values().data(), p.values().size());
    entry["scales"] = data.size();
    append(data, p.weight_scales().data(), p.weight_scales().size());
    products.push_back(std::move(entry));
  }
  const std::string meta = json{
      {"format", "dtnn-int8-model"},
      {"model", model.name()},
      {"checkpoint", {{"offset", 0}, {"bytes", checkpoint.size()}}},
      {"products", products}}.dump();
  std::string bytes(kMagic, sizeof kMagic);
  append(bytes, &kVersion, 1);
  const std::uint64_t meta_size = meta.size();
  append(bytes, &meta_size, 1);
  bytes += meta;
  bytes += data;
  const std::uint64_t hash = fnv1a(bytes.data(), bytes.size());
  append(bytes, &hash, 1);
  return bytes;
}

void decode_int8_model(const std::string& bytes, const std::string& where, Model& model) {
  if (bytes.size() < kHeader + sizeof(std::uint64_t) ||
      std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw Error(where + ": not a dtnn int8 model (expected \"DTNNINT8\" at offset 0)");
  std::uint32_t version = 0;
  std::uint64_t meta_size = 0, stored_hash = 0;
  std::memcpy(&version, bytes.data() + sizeof kMagic, sizeof version);
  std::memcpy(&meta_size, bytes.data() + sizeof kMagic + sizeof version, sizeof meta_size);
  if (version != kVersion)
    throw Error(where + ": int8 model format version " + std::to_string(version) +
                ", this dtnn reads version " + std::to_string(kVersion));
  const std::size_t body = bytes.size() - sizeof stored_hash;
  if (meta_size > body - kHeader)
    throw Error(where + ": truncated int8 model (metadata of " + std::to_string(meta_size) +
                " bytes at offset " + std::to_string(kHeader) + " runs past the end)");
  std::memcpy(&stored_hash, bytes.data() + body, sizeof stored_hash);
  if (fnv1a(bytes.data(), body) != stored_hash)
    throw Error(where + ": corrupt or truncated int8 model (checksum mismatch over " +
                std::to_string(body) + " bytes)");
  json meta;
  try {
    meta = json::parse(bytes.substr(kHeader, meta_size));
  } catch (const json::exception&) {
    throw Error(where + ": corrupt int8 model (unreadable metadata at offset " +
                std::to_string(kHeader) + ")");
  }
  const std::size_t data = kHeader + meta_size, data_size = body - data;
  auto fail = [&](const std::string& field, const std::string& expected) {
    throw Error(where + ": int8 model metadata '" + field + "': expected " + expected);
  };
  // A [offset, offset + count * size) range inside the data, from an unsigned field.
  auto range = [&](const json& in, const char* key, std::size_t count, std::size_t size,
                   const std::string& field) -> std::size_t {
    if (!in.contains(key) || !in[key].is_number_unsigned()) fail(field, "an offset");
    const auto offset = in[key].get<std::uint64_t>();
    if (offset > data_size || count > (data_size - offset) / size)
      fail(field, std::to_string(count * size) + " bytes inside the " + std::to_string(data_size) +
                      " of data");
    return data + offset;
  };
  // A string field, "" when missing or of another type (what JSON holds is never trusted).
  auto text = [](const json& in, const char* key) {
    const auto it = in.find(key);
    return it != in.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  if (!meta.is_object()) fail("(all)", "a JSON object");
  if (text(meta, "format") != "dtnn-int8-model") fail("format", "\"dtnn-int8-model\"");
  if (!meta.contains("checkpoint") || !meta["checkpoint"].is_object() ||
      !meta["checkpoint"].contains("bytes") || !meta["checkpoint"]["bytes"].is_number_unsigned())
    fail("checkpoint", "{\"offset\": O, \"bytes\": N}");
  const auto checkpoint_bytes = meta["checkpoint"]["bytes"].get<std::uint64_t>();
  const std::size_t checkpoint_at =
      range(meta["checkpoint"], "offset", checkpoint_bytes, 1, "checkpoint.offset");
  if (!meta.contains("products") || !meta["products"].is_array()) fail("products", "an array");

  // Every product of the file matched to the model's, in order, and read, before anything loads.
  const std::vector<Int8ProductRef> refs = int8_products(model);
  const json& products = meta["products"];
  if (products.size() != refs.size())
    throw Error(where + ": int8 model holds " + std::to_string(products.size()) +
                " int8 products, model '" + model.name() + "' has " + std::to_string(refs.size()));
  struct Loaded {
    std::vector<std::int8_t> values;
    std::vector<float> scales;
    float input_scale;
  };
  std::vector<Loaded> loaded;
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const json& e = products[i];
    const std::string field = "products[" + std::to_string(i) + "]";
    if (!e.is_object()) fail(field, "an object");
    const Int8Product& p = *refs[i].product;
    if (text(e, "layer") != refs[i].layer || text(e, "type") != refs[i].owner->type() ||
        !e.contains("k") || e["k"] != p.k() || !e.contains("n") || e["n"] != p.n())
      throw Error(where + ": " + field + " is " + text(e, "type") + " layer " + text(e, "layer") +
                  " " + e.value("k", json()).dump() + " x " + e.value("n", json()).dump() +
                  "; the model has " + refs[i].owner->type() + " layer " + refs[i].layer + " " +
                  std::to_string(p.k()) + " x " + std::to_string(p.n()));
    const double input_scale = e.contains("input_scale") && e["input_scale"].is_number()
                                   ? e["input_scale"].get<double>()
                                   : -1.0;
    if (!(input_scale > 0 && input_scale <= 3.4e38))
      fail(field + ".input_scale", "a number > 0 (a float32)");
    const auto count = static_cast<std::size_t>(p.k() * p.n());
    const std::size_t values = range(e, "values", count, 1, field + ".values");
    const std::size_t scales =
        range(e, "scales", static_cast<std::size_t>(p.n()), sizeof(float), field + ".scales");
    Loaded l{std::vector<std::int8_t>(count), std::vector<float>(static_cast<std::size_t>(p.n())),
             static_cast<float>(input_scale)};
    std::memcpy(l.values.data(), bytes.data() + values, count);
    std::memcpy(l.scales.data(), bytes.data() + scales, l.scales.size() * sizeof(float));
    Int8Product check;  // the checks of load(), on a copy that is not the layer's
    check.bind(p.k(), p.n(), {});
    try {
      check.load(l.values, l.scales, l.input_scale);
    } catch (const Error& err) {
      throw Error(where + ": " + field + " (layer " + refs[i].layer + "): " + err.what());
    }
    loaded.push_back(std::move(l));
  }
  decode_checkpoint(bytes.substr(checkpoint_at, checkpoint_bytes), where + " (its float part)",
                    model);
  for (std::size_t i = 0; i < refs.size(); ++i)
    refs[i].product->load(std::move(loaded[i].values), std::move(loaded[i].scales),
                          loaded[i].input_scale);
}

void load_int8_model(const std::filesystem::path& file, Model& model) {
  decode_int8_model(read_file(file), file.string(), model);
}

}  // namespace dtnn
