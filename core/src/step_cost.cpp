#include "dtnn/step_cost.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>

#include "dtnn/error.hpp"
#include "dtnn/layer_trace.hpp"
#include "dtnn/model.hpp"
#include "dtnn/trace.hpp"
#include "dtnn/trainer.hpp"

namespace dtnn {

using nlohmann::json;

namespace {

// Runs `steps` training steps on consecutive batches, the next one named as in training.
void train_steps(Experiment& e, int steps) {
  Trainer& trainer = e.trainer();
  const std::int64_t batch = trainer.batch_plan().global;
  const std::int64_t n = trainer.train_size();
  if (n < batch)
    throw Error("dtnn predict: the training split holds " + std::to_string(n) +
                " samples, fewer than a batch of " + std::to_string(batch));
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  auto at = [&](std::int64_t i) {
    const std::int64_t first = (i * batch) % (n - batch + 1);
    return std::span<const std::int64_t>(order).subspan(static_cast<std::size_t>(first),
                                                        static_cast<std::size_t>(batch));
  };
  static std::int64_t step = 0;  // the batches go on where the last call left them
  for (int s = 0; s < steps; ++s, ++step) trainer.train_step(at(step), 1.0, false, at(step + 1));
}

// The model's layers, their numbers in the trace, and their parameters' bytes.
StepCost layers_of(Experiment& e) {
  Model& model = e.model();
  StepCost cost;
  cost.batch = e.trainer().batch_plan().global;
  for (std::size_t i = 0; i < model.num_layers(); ++i) {
    LayerCost l;
    const auto [begin, end] = model.parameter_range(i);
    for (std::size_t p = begin; p < end; ++p)
      l.parameter_bytes += model.parameters()[p].value.bytes();
    cost.layers.push_back(l);
  }
  return cost;
}

// The optimizer's time per step, shared among the layers by their parameters' bytes.
void share_optimizer(StepCost& cost, double optimizer_s) {
  double bytes = 0;
  for (const LayerCost& l : cost.layers) bytes += l.parameter_bytes;
  for (LayerCost& l : cost.layers)
    l.optimizer_s = bytes > 0 ? optimizer_s * l.parameter_bytes / bytes : 0.0;
}

}  // namespace

StepCost measure_step_cost(Experiment& e, int warmup, int steps) {
  train_steps(e, warmup);
  trace::start({true, std::size_t{1} << 24});
  train_steps(e, steps);
  trace::stop();
  const trace::Recorded r = trace::collect();
  StepCost cost = layers_of(e);
  std::map<int, std::size_t> index;  // trace number -> the model's layer
  for (std::size_t i = 0; i < e.model().num_layers(); ++i)
    if (!e.model().reshapes(i))  // a reshape runs nothing: no span, no number
      index[layer_trace::number(e.model().layer(i))] = i;
  for (const trace::Event& ev : r.events) {
    if (ev.phase != trace::Phase::forward && ev.phase != trace::Phase::backward) continue;
    const json args = json::parse(r.labels[ev.label].args, nullptr, false);
    if (!args.is_object() || !args.contains("layer")) continue;
    const auto it = index.find(args["layer"].get<int>());
    if (it == index.end()) continue;  // a layer inside a block: its block's span holds it
    LayerCost& l = cost.layers[it->second];
    (ev.phase == trace::Phase::forward ? l.forward_s : l.backward_s) +=
        static_cast<double>(ev.end_ns - ev.begin_ns) * 1e-9 / steps;
  }
  auto per_step = [&](trace::Phase p) { return r.seconds[static_cast<std::size_t>(p)] / steps; };
  cost.data_s = per_step(trace::Phase::data);
  cost.loss_s = per_step(trace::Phase::loss);
  share_optimizer(cost, per_step(trace::Phase::optimizer));
  return cost;
}

namespace {

// A field of the profile: there, of its type, and in range; errors say "<where>: <path>: ...".
class ProfileReader {
 public:
  explicit ProfileReader(std::string where) : where_(std::move(where)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& expected,
                         const json* got) const {
    std::string shown = got ? got->dump() : std::string("nothing");
    if (shown.size() > 60) shown = shown.substr(0, 57) + "...";
    throw Error(where_ + ": " + path + ": expected " + expected + ", got " + shown);
  }
  const json& field(const json& object, const std::string& path, const std::string& key) const {
    const auto it = object.find(key);
    if (it == object.end())
      fail(path + key, "a value (the profile of dtnn run --profile)", nullptr);
    return *it;
  }
  double milliseconds(const json& object, const std::string& path, const std::string& key) const {
    const json& v = field(object, path, key);
    if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0 ||
        v.get<double>() > 1e12)
      fail(path + key, "a time in milliseconds, >= 0", &v);
    return v.get<double>();
  }
  std::int64_t integer(const json& object, const std::string& path, const std::string& key,
                       std::int64_t low, std::int64_t high, const std::string& expected) const {
    const json& v = field(object, path, key);
    // An unsigned value beyond int64 reads as a negative one: below low, refused too.
    if (!v.is_number_integer() || v.get<std::int64_t>() < low || v.get<std::int64_t>() > high)
      fail(path + key, expected, &v);
    return v.get<std::int64_t>();
  }

 private:
  std::string where_;
};

}  // namespace

ProfileTimes read_profile(const std::string& text, const std::string& where) {
  const json file = json::parse(text, nullptr, false);
  if (file.is_discarded())
    throw Error(where +
                ": not JSON (expected a history with a \"profile\": dtnn run --profile "
                "--history FILE.json, or its profile object)");
  const ProfileReader r(where);
  const bool history = file.is_object() && file.contains("profile");
  const json& profile = history ? file["profile"] : file;
  const std::string path = history ? "profile." : "";
  if (!profile.is_object() || !profile.contains("layers"))
    r.fail(history ? "profile" : "the file",
           "a history with a \"profile\" (dtnn run --profile --history FILE.json), or its "
           "profile object",
           &profile);
  ProfileTimes times;
  times.batch_size = r.integer(profile, path, "batch_size", 1, 1ll << 31, "a batch size >= 1");
  times.data_wait_ms = r.milliseconds(profile, path, "data_wait_ms");
  times.loss_ms = r.milliseconds(profile, path, "loss_ms");
  times.optimizer_ms = r.milliseconds(profile, path, "optimizer_ms");
  const json& layers = profile["layers"];
  if (!layers.is_array()) r.fail(path + "layers", "an array of the layers' rows", &layers);
  std::set<std::int64_t> seen;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string at = path + "layers[" + std::to_string(i) + "].";
    const json& row = layers[i];
    if (!row.is_object()) r.fail(at.substr(0, at.size() - 1), "a layer's row (an object)", &row);
    ProfileTimes::Row out;
    out.layer = r.integer(row, at, "layer", 0, 1 << 30, "a layer number >= 0");
    const json& type = r.field(row, at, "type");
    if (!type.is_string()) r.fail(at + "type", "the layer's type (a string)", &type);
    out.type = type.get<std::string>();
    out.forward_ms = r.milliseconds(row, at, "forward_ms");
    out.backward_ms = r.milliseconds(row, at, "backward_ms");
    if (!seen.insert(out.layer).second)
      r.fail(at + "layer", "each layer number once", &row["layer"]);
    times.layers.push_back(std::move(out));
  }
  return times;
}

StepCost step_cost_from_profile(Experiment& e, const ProfileTimes& profile,
                                const std::string& where) {
  trace::start({true, std::size_t{1} << 20});  // numbers the layers
  train_steps(e, 1);
  trace::stop();
  StepCost cost = layers_of(e);
  cost.batch = profile.batch_size;
  std::map<std::int64_t, const ProfileTimes::Row*> rows;
  for (const ProfileTimes::Row& row : profile.layers) rows[row.layer] = &row;
  for (std::size_t i = 0; i < e.model().num_layers(); ++i) {
    if (e.model().reshapes(i)) continue;  // runs nothing
    const int number = layer_trace::number(e.model().layer(i));
    const auto it = rows.find(number);
    if (it == rows.end()) continue;  // a layer that costs nothing (flatten)
    const ProfileTimes::Row& row = *it->second;
    if (row.type != e.model().layer(i).type())
      throw Error(where + ": profile row " + std::to_string(number) + " is a " + row.type +
                  ", this experiment's layer " + std::to_string(i + 1) + " a " +
                  e.model().layer(i).type() + ": the profile is of another model");
    cost.layers[i].forward_s = row.forward_ms * 1e-3;
    cost.layers[i].backward_s = row.backward_ms * 1e-3;
  }
  cost.data_s = profile.data_wait_ms * 1e-3;
  cost.loss_s = profile.loss_ms * 1e-3;
  share_optimizer(cost, profile.optimizer_ms * 1e-3);
  return cost;
}

}  // namespace dtnn
