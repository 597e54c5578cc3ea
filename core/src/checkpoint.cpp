#include "dtnn/checkpoint.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <regex>
#include <vector>

#include "dtnn/checked.hpp"
#include "dtnn/digest.hpp"
#include "dtnn/error.hpp"
#include "dtnn/file_io.hpp"
#include "dtnn/model.hpp"
#include "dtnn/nonfinite.hpp"
#include "dtnn/optimizer.hpp"
#include "dtnn/trace.hpp"

namespace dtnn {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr char kMagic[8] = {'D', 'T', 'N', 'N', 'C', 'K', 'P', 'T'};
constexpr std::uint32_t kVersion = 1;

struct Entry {
  std::string section, name;
  Tensor tensor;
};

// Every tensor a checkpoint carries for this model (and optimizer), in a fixed order.
std::vector<Entry> entries(Model& model, Optimizer* optimizer) {
  std::vector<Entry> out;
  for (const auto& p : model.parameters()) out.push_back({"parameter", p.name, p.value});
  for (std::size_t i = 0; i < model.num_layers(); ++i) {
    const auto state = model.layer(i).state();
    for (std::size_t k = 0; k < state.size(); ++k)
      out.push_back({"layer_state",
                     std::to_string(i + 1) + "." + model.layer(i).type() + "." + std::to_string(k),
                     state[k]});
  }
  if (optimizer) {
    const auto state = optimizer->state();
    for (std::size_t k = 0; k < state.size(); ++k)
      if (state[k].defined()) out.push_back({"optimizer_state", std::to_string(k), state[k]});
  }
  return out;
}

template <class T>
void put(std::string& out, T value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

json shape_json(const Shape& s) {
  json j = json::array();
  for (int i = 0; i < s.rank(); ++i) j.push_back(s[i]);
  return j;
}

// The checkpoint files in dir, oldest first (zero-padded names sort by position).
std::vector<fs::path> checkpoint_files(const fs::path& dir) {
  static const std::regex pattern(R"(checkpoint-epoch-\d+-step-\d+\.dtnn)");
  std::error_code ec;
  std::vector<fs::path> all;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (std::regex_match(e.path().filename().string(), pattern)) all.push_back(e.path());
  if (ec) throw Error(dir.string() + ": cannot read the checkpoint folder: " + ec.message());
  std::sort(all.begin(), all.end());
  return all;
}

// Throws an Error naming the file and the field when the metadata is not what encode_checkpoint
// writes: a missing or mistyped field, a position that no run reaches, an offset or a shape that
// is not a size.
void check_metadata(const json& meta, const std::string& where) {
  auto fail = [&](const std::string& field, const std::string& expected, const json& got) {
    throw Error(where + ": checkpoint metadata '" + field + "': expected " + expected + ", got " +
                got.dump().substr(0, 100));
  };
  auto want = [&](const json& in, const char* key, const std::string& field, auto&& is_ok,
                  const std::string& expected) {
    if (!in.contains(key) || !is_ok(in[key])) fail(field, expected, in.value(key, json()));
  };
  auto is_string = [](const json& v) { return v.is_string(); };
  // Positions: at most 2^40 (a million steps a second for 12 days).
  constexpr std::int64_t kMaxPosition = std::int64_t{1} << 40;
  auto position = [&](const json& v) {
    return v.is_number_integer() && v.get<std::int64_t>() >= 0 &&
           v.get<std::int64_t>() <= kMaxPosition &&
           !(v.is_number_unsigned() &&
             v.get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxPosition));
  };
  if (!meta.is_object()) fail("", "a JSON object", meta);
  for (const char* key : {"dtype", "optimizer", "model"})
    want(meta, key, key, is_string, "a string");
  want(
      meta, "seed", "seed",
      [](const json& v) { return v.is_string() && parse_uint64(v.get<std::string>()); },
      "an unsigned integer as a string");
  for (const char* key : {"epoch", "step", "global_step"})
    want(meta, key, key, position, "an integer in [0, 2^40]");
  want(
      meta, "learning_rate", "learning_rate",
      [](const json& v) {
        return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0;
      },
      "a finite number >= 0");
  if (meta.contains("loss_scale"))
    want(
        meta, "loss_scale", "loss_scale",
        [](const json& v) {
          return v.is_array() && v.size() == 2 && v[0].is_number() &&
                 std::isfinite(v[0].get<double>()) && v[0].get<double>() >= 1 &&
                 v[1].is_number_integer() && v[1].get<std::int64_t>() >= 0;
        },
        "[a finite scale >= 1, the finite steps counted (an integer >= 0)]");
  want(
      meta, "tensors", "tensors", [](const json& v) { return v.is_array(); }, "a list");
  want(
      meta, "schedulers", "schedulers", [](const json& v) { return v.is_array(); }, "a list");
  for (std::size_t i = 0; i < meta["tensors"].size(); ++i) {
    const json& t = meta["tensors"][i];
    const std::string at = "tensors[" + std::to_string(i) + "]";
    if (!t.is_object()) fail(at, "an object", t);
    for (const char* key : {"section", "name", "dtype"})
      want(t, key, at + "." + key, is_string, "a string");
    want(
        t, "offset", at + ".offset", [](const json& v) { return v.is_number_unsigned(); },
        "a byte offset >= 0");
    want(
        t, "shape", at + ".shape",
        [](const json& v) {
          return v.is_array() && v.size() <= Shape::kMaxRank &&
                 std::all_of(v.begin(), v.end(),
                             [](const json& d) { return d.is_number_unsigned(); });
        },
        "a list of at most " + std::to_string(Shape::kMaxRank) + " sizes");
  }
  for (std::size_t i = 0; i < meta["schedulers"].size(); ++i) {
    const json& sc = meta["schedulers"][i];
    const std::string at = "schedulers[" + std::to_string(i) + "]";
    if (!sc.is_object()) fail(at, "an object", sc);
    want(sc, "name", at + ".name", is_string, "a string");
    want(
        sc, "state", at + ".state",
        [](const json& v) {
          return v.is_array() && std::all_of(v.begin(), v.end(),
                                             [](const json& b) { return b.is_number_unsigned(); });
        },
        "a list of 64-bit patterns");
  }
}

}  // namespace

std::string encode_checkpoint(Model& model, Optimizer* optimizer, const CheckpointInfo& info) {
  const auto list = entries(model, optimizer);
  json meta = {{"format", "dtnn-checkpoint"},
               {"model", model.name()},
               {"dtype", to_string(model.options().dtype)},
               {"optimizer", optimizer ? info.optimizer : ""},
               {"seed", std::to_string(info.seed)},
               {"epoch", info.position.epoch},
               {"step", info.position.step},
               {"global_step", info.position.global_step},
               {"learning_rate", info.learning_rate},
               {"schedulers", json::array()},
               {"tensors", json::array()}};
  if (info.loss_scale > 0) meta["loss_scale"] = {info.loss_scale, info.loss_scale_good_steps};
  for (const SchedulerState& sc : info.schedulers) {  // doubles as bit patterns: exact, and inf
    json bits = json::array();
    for (double v : sc.values) bits.push_back(std::bit_cast<std::uint64_t>(v));
    meta["schedulers"].push_back({{"name", sc.name}, {"state", bits}});
  }
  std::size_t offset = 0;
  for (const auto& e : list) {
    meta["tensors"].push_back({{"section", e.section},
                               {"name", e.name},
                               {"dtype", to_string(e.tensor.dtype())},
                               {"shape", shape_json(e.tensor.shape())},
                               {"offset", offset}});
    offset += e.tensor.bytes();
  }
  auto add_vectors = [&](const std::vector<std::vector<float>>& vectors, const char* section,
                         const char* name) {
    for (std::size_t r = 0; r < vectors.size(); ++r) {
      meta["tensors"].push_back({{"section", section},
                                 {"name", name + std::to_string(r)},
                                 {"dtype", "float32"},
                                 {"shape", json::array({vectors[r].size()})},
                                 {"offset", offset}});
      offset += vectors[r].size() * sizeof(float);
    }
  };
  add_vectors(info.exchange_residuals, "exchange_residual", "rank ");
  add_vectors(info.exchange_codec_states, "exchange_codec_state", "bucket ");
  const std::string text = meta.dump();
  std::string out(kMagic, sizeof kMagic);
  put(out, kVersion);
  put(out, static_cast<std::uint64_t>(text.size()));
  out += text;
  for (const auto& e : list) {
    const Tensor host = e.tensor.to(Device::cpu);  // a model on a GPU: copied back
    out.append(static_cast<const char*>(host.raw()), host.bytes());
  }
  for (const auto* vectors : {&info.exchange_residuals, &info.exchange_codec_states})
    for (const auto& v : *vectors)
      out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  put(out, fnv1a(out.data(), out.size()));
  return out;
}

CheckpointInfo load_checkpoint(const fs::path& file, Model& model, Optimizer* optimizer,
                               const std::string& optimizer_name) {
  return decode_checkpoint(read_file(file), file.string(), model, optimizer, optimizer_name);
}

namespace {

// A checkpoint's layout: magic, version, metadata size, metadata JSON, tensor data, checksum.
struct FileLayout {
  json meta;
  std::size_t data = 0;  // where the tensor data starts
  std::size_t body = 0;  // where the checksum starts
};

FileLayout read_layout(const std::string& bytes, const std::string& where) {
  const std::size_t header = sizeof kMagic + sizeof(std::uint32_t) + sizeof(std::uint64_t);
  if (bytes.size() < header + sizeof(std::uint64_t) ||
      std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw Error(where + ": not a dtnn checkpoint (expected \"DTNNCKPT\" at offset 0)");
  std::uint32_t version = 0;
  std::memcpy(&version, bytes.data() + sizeof kMagic, sizeof version);
  if (version != kVersion)
    throw Error(where + ": checkpoint format version " + std::to_string(version) +
                ", this dtnn reads version " + std::to_string(kVersion));
  std::uint64_t meta_size = 0, stored_hash = 0;
  std::memcpy(&meta_size, bytes.data() + sizeof kMagic + sizeof version, sizeof meta_size);
  if (meta_size > bytes.size() - header - sizeof stored_hash)
    throw Error(where + ": truncated checkpoint (metadata of " + std::to_string(meta_size) +
                " bytes at offset " + std::to_string(header) + " runs past the end of the " +
                std::to_string(bytes.size()) + "-byte file)");
  FileLayout layout;
  layout.body = bytes.size() - sizeof stored_hash;
  layout.data = header + meta_size;
  std::memcpy(&stored_hash, bytes.data() + layout.body, sizeof stored_hash);
  try {
    layout.meta = json::parse(bytes.substr(header, meta_size));
  } catch (const json::exception&) {
    throw Error(where + ": corrupt checkpoint (unreadable metadata at offset " +
                std::to_string(header) + ")");
  }
  if (fnv1a(bytes.data(), layout.body) != stored_hash)
    throw Error(where + ": corrupt or truncated checkpoint (checksum mismatch over " +
                std::to_string(layout.body) + " bytes)");
  return layout;
}

// Where in the file each of list's tensors starts, after matching the checkpoint's tensors to
// them one to one (parameters and layer state always; optimizer state when one is given).
std::vector<std::size_t> tensor_starts(const FileLayout& layout, const std::vector<Entry>& list,
                                       bool with_optimizer, const Model& model,
                                       const std::string& where) {
  const json& meta = layout.meta;
  auto describe = [](const json& t) {
    return t.at("section").get<std::string>() + " '" + t.at("name").get<std::string>() + "'";
  };
  std::vector<const json*> wanted;
  for (const auto& t : meta.at("tensors"))
    if ((with_optimizer || t.at("section") != "optimizer_state") &&
        t.at("section") != "exchange_residual" && t.at("section") != "exchange_codec_state")
      wanted.push_back(&t);
  const std::string models =
      " (checkpoint of model '" + meta.value("model", "?") + "', this is '" + model.name() + "')";
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < std::max(wanted.size(), list.size()); ++i) {
    if (i >= wanted.size())
      throw Error(where + ": checkpoint lacks this model's " + list[i].section + " '" +
                  list[i].name + "'" + models);
    const json& t = *wanted[i];
    if (i >= list.size())
      throw Error(where + ": checkpoint has " + describe(t) + " that this model lacks" + models);
    const Entry& e = list[i];
    json expected_shape = shape_json(e.tensor.shape());
    if (t.at("section") != e.section || t.at("name") != e.name || t.at("shape") != expected_shape ||
        t.at("dtype") != to_string(e.tensor.dtype()))
      throw Error(where + ": checkpoint's " + describe(t) + " " + t.at("shape").dump() + " " +
                  t.at("dtype").get<std::string>() + " does not match this model's " + e.section +
                  " '" + e.name + "' " + expected_shape.dump() + " " + to_string(e.tensor.dtype()) +
                  " (checkpoint of model '" + meta.value("model", "?") + "')");
    const std::size_t data = layout.body - layout.data, offset = t.at("offset").get<std::size_t>();
    if (offset > data || e.tensor.bytes() > data - offset)
      throw Error(where + ": truncated checkpoint (" + describe(t) + " at offset " +
                  std::to_string(offset) + " of the data, " + std::to_string(e.tensor.bytes()) +
                  " bytes, runs past its " + std::to_string(data) + " bytes)");
    starts.push_back(layout.data + offset);
  }
  return starts;
}

// The position, seed, learning rate and schedulers' state the metadata records.
CheckpointInfo info_of(const json& meta) {
  CheckpointInfo info;
  info.optimizer = meta.value("optimizer", "");
  info.seed = *parse_uint64(meta.value("seed", std::string("0")));
  info.position.epoch = meta.value("epoch", std::int64_t{0});
  info.position.step = meta.value("step", std::int64_t{0});
  info.position.global_step = meta.value("global_step", std::int64_t{0});
  info.learning_rate = meta.value("learning_rate", 0.0);
  if (meta.contains("loss_scale")) {
    info.loss_scale = meta["loss_scale"][0].get<double>();
    info.loss_scale_good_steps = meta["loss_scale"][1].get<std::int64_t>();
  }
  for (const json& sc : meta.value("schedulers", json::array())) {
    SchedulerState state{sc.at("name").get<std::string>(), {}};
    for (const json& bits : sc.at("state"))
      state.values.push_back(std::bit_cast<double>(bits.get<std::uint64_t>()));
    info.schedulers.push_back(std::move(state));
  }
  return info;
}

// The float32 vectors of one of a checkpoint's exchange sections, in order ("rank 0", "rank 1",
// ... of "exchange_residual"; "bucket 0", ... of "exchange_codec_state"), each inside the data and
// finite. what: how messages name one ("exchange residual").
std::vector<std::vector<float>> exchange_vectors(const FileLayout& layout, const std::string& bytes,
                                                 const std::string& where,
                                                 const std::string& section,
                                                 const std::string& prefix,
                                                 const std::string& what) {
  std::vector<std::vector<float>> out;
  for (const json& t : layout.meta.at("tensors")) {
    if (t.at("section") != section) continue;
    const std::string name = prefix + std::to_string(out.size());
    const json& shape = t.at("shape");
    if (t.at("name") != name || t.at("dtype") != "float32" || !shape.is_array() ||
        shape.size() != 1 || !shape[0].is_number_unsigned() || !t.at("offset").is_number_unsigned())
      throw Error(where + ": checkpoint's " + what + " " + t.at("name").dump() + ": expected '" +
                  name + "', a float32 vector");
    const std::size_t n = shape[0].get<std::size_t>(), offset = t.at("offset").get<std::size_t>();
    const std::size_t data = layout.body - layout.data;
    if (offset > data || n > (data - offset) / sizeof(float))
      throw Error(where + ": truncated checkpoint (" + what + " '" + name + "' at offset " +
                  std::to_string(offset) + " of the data runs past its " + std::to_string(data) +
                  " bytes)");
    std::vector<float> values(n);
    if (n > 0)  // an empty vector's data() may be null, which memcpy may not take
      std::memcpy(values.data(), bytes.data() + layout.data + offset, n * sizeof(float));
    if (!std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); }))
      throw Error(where + ": " + what + " '" + name + "' holds a value that is not finite");
    out.push_back(std::move(values));
  }
  return out;
}

}  // namespace

CheckpointInfo decode_checkpoint(const std::string& bytes, const std::string& where, Model& model,
                                 Optimizer* optimizer, const std::string& optimizer_name) {
  const FileLayout layout = read_layout(bytes, where);
  // Every field is checked for its type and range before it is used: the checksum proves the file
  // is what was written, not that what was written is sane.
  const json& meta = layout.meta;
  check_metadata(meta, where);
  const auto list = entries(model, optimizer);
  const std::string dtype = to_string(model.options().dtype);
  if (meta.value("dtype", "") != dtype)
    throw Error(where + ": checkpoint holds " + meta.value("dtype", "?") +
                " tensors, this model is " + dtype);
  if (optimizer && meta.value("optimizer", "") != optimizer_name)
    throw Error(where + ": checkpoint holds the state of optimizer '" +
                meta.value("optimizer", "") + "', this run uses '" + optimizer_name +
                "' (load weights only with training.weights_and_bias_filename)");
  const std::vector<std::size_t> starts = tensor_starts(layout, list, optimizer, model, where);
  std::vector<std::vector<float>> residuals =
      exchange_vectors(layout, bytes, where, "exchange_residual", "rank ", "exchange residual");
  std::vector<std::vector<float>> codec_states = exchange_vectors(
      layout, bytes, where, "exchange_codec_state", "bucket ", "exchange codec state");
  std::vector<Tensor> staged;  // every tensor read and checked before any is changed
  for (std::size_t i = 0; i < list.size(); ++i) {
    Tensor host = list[i].tensor.host_staging();
    std::memcpy(host.raw(), bytes.data() + starts[i], list[i].tensor.bytes());
    if (list[i].section == "parameter" && !all_finite(host))
      throw Error(where + ": parameter '" + list[i].name +
                  "' holds a value that is not finite (NaN or infinity): the run that wrote it had "
                  "diverged; resume from an earlier checkpoint");
    staged.push_back(std::move(host));
  }
  for (std::size_t i = 0; i < list.size(); ++i) {  // everything matches: copy
    Tensor t = list[i].tensor;                     // shares the storage
    t.copy_from(staged[i]);
  }
  CheckpointInfo info = info_of(meta);
  info.exchange_residuals = std::move(residuals);
  info.exchange_codec_states = std::move(codec_states);
  return info;
}

namespace {
fs::path created_folder(fs::path dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir.string() + ": cannot create the checkpoint folder: " + ec.message());
  return dir;
}
}  // namespace

CheckpointFolder::CheckpointFolder(fs::path dir, int keep, const fs::path& resumed_from,
                                   bool overwrite)
    : dir_(created_folder(std::move(dir))), lock_(dir_, "output.checkpoint_dir"), keep_(keep) {
  std::error_code ec;
  remove_stale_temporaries(dir_);
  // The resumed checkpoint, when it lies in this folder: it and the ones before it are this run's.
  const fs::path resumed = resumed_from.empty()                 ? fs::path()
                           : fs::is_directory(resumed_from, ec) ? latest_checkpoint(resumed_from)
                                                                : resumed_from;
  const bool continues = !resumed.empty() && fs::equivalent(resumed.parent_path(), dir_, ec);
  std::vector<fs::path> others;
  for (const fs::path& f : checkpoint_files(dir_)) {
    if (continues && f.filename() <= resumed.filename())
      own_.push_back(f);
    else
      others.push_back(f);
  }
  if (others.empty()) return;
  if (!overwrite)
    throw Error(dir_.string() + ": output.checkpoint_dir holds " + std::to_string(others.size()) +
                " checkpoint(s) that this run did not write and does not continue (newest: " +
                others.back().filename().string() + "); resume from them (--resume " +
                dir_.string() +
                "), choose another folder, or set output.checkpoint_overwrite to remove them");
  for (const fs::path& f : others) fs::remove(f, ec);
}

fs::path CheckpointFolder::save(Model& model, Optimizer& optimizer, const CheckpointInfo& info) {
  char name[96];
  std::snprintf(name, sizeof name, "checkpoint-epoch-%04lld-step-%06lld.dtnn",
                static_cast<long long>(info.position.epoch),
                static_cast<long long>(info.position.step));
  const fs::path file = dir_ / name;
  const trace::Span span(trace::Phase::checkpoint);
  write_file_atomically(file, encode_checkpoint(model, &optimizer, info));
  if (own_.empty() || own_.back() != file) own_.push_back(file);
  while (keep_ > 0 && own_.size() > static_cast<std::size_t>(keep_)) {
    std::error_code ec;
    fs::remove(own_.front(), ec);
    own_.erase(own_.begin());
  }
  return file;
}

fs::path latest_checkpoint(const fs::path& dir) {
  const std::vector<fs::path> all = checkpoint_files(dir);
  if (all.empty())
    throw Error(dir.string() + ": no checkpoint (checkpoint-epoch-*-step-*.dtnn) in this folder");
  return all.back();
}

}  // namespace dtnn
